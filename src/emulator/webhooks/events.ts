/**
 * The emulator's webhook events, as the service sends them:
 *
 * - `sms.mt.status_update` at each status change of an SMS sent: PENDING, SENT,
 *   REMOTE_QUEUED, RECEIVED as its timeline reaches them (sms/record.ts), and a status set
 *   by the control API (FAILED...). `data` is the SMS object as of that change. An SMS
 *   sent with `options.webhook.endpoint` has its reports sent there instead of to the
 *   subscriptions (signed with the secret of the account's sms.mt.status_update
 *   subscription, when there is one; decision).
 * - `sms.mo` when the account receives an SMS (POST /emulator/sms/inbound); `data` is the
 *   SMS object (type IN).
 *
 * Subscriptions are those of webhooks.subscribe (kept with the data) and those given at
 * start (`callscript emulator --webhook URL --webhook-secret S`). An SMS sent while no
 * subscription nor endpoint would get its reports is not followed (decision: no timers
 * for nobody).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../context.js';
import type { EmulatorStore } from '../store.js';
import type { Clock } from '../time.js';
import { smsObject, type SmsRecord, type TimelineStep } from '../sms/record.js';
import type { HookRecord, HookType } from './hooks.js';
import { WebhookSender, type RetryPolicy } from './sender.js';

interface Target {
  endpoint: string;
  /** The subscription whose hash and secret the event carries (none: hook_hash "" and no signature). */
  hook?: HookRecord;
}

export class EmulatorWebhooks {
  readonly sender: WebhookSender;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: EmulatorStore,
    private readonly clock: Clock,
    log: Logger,
    /** Subscriptions given at start (--webhook): not stored, not reset. */
    private readonly configured: readonly HookRecord[],
    policy: RetryPolicy,
  ) {
    this.sender = new WebhookSender(policy, log);
  }

  /** Every subscription (of `type`): those given at start first, then webhooks.subscribe's, oldest first. */
  hooks(type?: HookType): HookRecord[] {
    return [...this.configured, ...this.store.hooks.values()].filter((h) => type === undefined || h.type === type);
  }

  /** A new outbound SMS: each later step of its timeline is reported when its time comes. */
  smsCreated(r: SmsRecord): void {
    if (this.statusTargets(r).length === 0) return;
    const now = this.clock.now();
    for (const step of r.timeline.slice(1)) {
      const t = setTimeout(
        () => {
          this.timers.delete(t);
          this.stepReached(r.hash, step);
        },
        Math.max(0, step.at - now),
      );
      this.timers.add(t);
    }
  }

  /** An SMS moved to a status by the control API: reported at once. */
  smsStatusSet(r: SmsRecord): void {
    const step = r.timeline[r.timeline.length - 1];
    if (step) this.emitStatus(r, step);
  }

  /** An SMS received by the account. */
  smsReceived(r: SmsRecord): void {
    const data = smsObject(r, this.clock.now());
    for (const hook of this.hooks('sms.mo')) this.emit({ endpoint: hook.endpoint, hook }, 'sms.mo', r.created, data);
  }

  /** Stops the timers and the deliveries (the emulator closes). */
  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.sender.close();
  }

  private stepReached(hash: string, step: TimelineStep): void {
    const r = this.store.sms.get(hash);
    // forgotten (reset, limit), or moved to another status meanwhile (the step was dropped)
    if (!r || !r.timeline.includes(step)) return;
    this.emitStatus(r, step);
  }

  private emitStatus(r: SmsRecord, step: TimelineStep): void {
    const data = smsObject(r, step.at, step);
    for (const target of this.statusTargets(r)) this.emit(target, 'sms.mt.status_update', step.at, data);
  }

  private statusTargets(r: SmsRecord): Target[] {
    const hooks = this.hooks('sms.mt.status_update');
    const own = r.options?.webhook?.endpoint;
    if (own !== undefined) return [hooks[0] ? { endpoint: own, hook: hooks[0] } : { endpoint: own }];
    return hooks.map((hook) => ({ endpoint: hook.endpoint, hook }));
  }

  private emit(target: Target, type: HookType, at: number, data: unknown): void {
    const secret = target.hook?.options.hmac_secret;
    this.sender.send({
      endpoint: target.endpoint,
      hookHash: target.hook?.hash ?? '',
      ...(secret !== undefined ? { secret } : {}),
      algo: target.hook?.options.hmac_algo ?? 'SHA256',
      type,
      eventId: randomUUID(),
      eventAt: new Date(at).toISOString(),
      data,
    });
  }
}
