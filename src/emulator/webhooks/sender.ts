/**
 * Delivery of webhook events as the service sends them: a POST of the JSON body
 * `{event_id, event_at, hook_hash, try, type, data}` with `Content-Type: application/json`,
 * `X-CALLR-EventId`, and `X-CALLR-HmacSignature` (base64 of the HMAC of the raw body, SHA-256
 * by default) when the subscription has a secret; no `Expect: 100-continue`.
 *
 * An attempt fails on a network error, no answer within the timeout, or an HTTP status
 * other than 2xx. Failures that may pass (network, timeout, 408, 429, 5xx) are tried again
 * after a delay, the same event (same event_id) with `try` one more, so a new body and a new
 * signature, up to `tries` attempts in all; another 4xx is a refusal, not tried again
 * (decision: the receiver said the event itself is wrong). Every attempt is logged in a
 * bounded list (GET /emulator/webhooks/deliveries).
 */
import { createHmac } from 'node:crypto';
import type { Logger } from '../context.js';
import type { HmacAlgo } from './hooks.js';

export interface RetryPolicy {
  /** Attempts in all, the first included (1: never tried again). */
  tries: number;
  /** Delay before attempt n+1 (the last one repeats), in ms. */
  delaysMs: readonly number[];
  /** An attempt with no answer within this long fails. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { tries: 5, delaysMs: [1000, 5000, 30_000, 120_000], timeoutMs: 5000 };

/** Attempts kept in the deliveries log (the oldest go first). */
export const MAX_DELIVERY_LOG = 1000;

export interface WebhookEvent {
  endpoint: string;
  hookHash: string;
  secret?: string;
  algo: HmacAlgo;
  type: string;
  eventId: string;
  /** ISO 8601 with milliseconds, UTC. */
  eventAt: string;
  data: unknown;
}

export interface DeliveryAttempt {
  event_id: string;
  type: string;
  hook_hash: string;
  endpoint: string;
  try: number;
  at: string;
  /** The HTTP status answered; null when none came (network error, timeout). */
  http_status: number | null;
  /** delivered (2xx), retry (failed, tried again), failed (failed, the last try), refused (4xx, not tried again). */
  outcome: 'delivered' | 'retry' | 'failed' | 'refused';
  error?: string;
}

/** The body of one attempt of an event (its `try` counts from 0). */
export function eventBody(e: WebhookEvent, attempt: number): string {
  return JSON.stringify({
    event_id: e.eventId,
    event_at: e.eventAt,
    hook_hash: e.hookHash,
    try: attempt,
    type: e.type,
    data: e.data,
  });
}

/** X-CALLR-HmacSignature of a body: base64 of its HMAC with the secret. */
export function hmacSignature(body: string, secret: string, algo: HmacAlgo = 'SHA256'): string {
  return createHmac(algo.toLowerCase(), secret).update(body, 'utf8').digest('base64');
}

export class WebhookSender {
  private readonly log: DeliveryAttempt[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<AbortController>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sends `e` in the background (with its retries). */
  send(e: WebhookEvent): void {
    this.attempt(e, 0);
  }

  /** The last attempts, oldest first. */
  deliveries(): readonly DeliveryAttempt[] {
    return this.log;
  }

  /** Events with an attempt under way or a retry waiting. */
  get pending(): number {
    return this.running.size + this.timers.size;
  }

  /** Drops the retries waiting, aborts the attempts under way, and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const c of this.inflight) c.abort();
    await Promise.allSettled([...this.running]);
  }

  private attempt(e: WebhookEvent, n: number): void {
    if (this.closed) return;
    const p = this.post(e, n).finally(() => this.running.delete(p));
    this.running.add(p);
  }

  private async post(e: WebhookEvent, n: number): Promise<void> {
    const body = eventBody(e, n);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'callscript-emulator',
      'x-callr-eventid': e.eventId,
    };
    if (e.secret !== undefined) headers['x-callr-hmacsignature'] = hmacSignature(body, e.secret, e.algo);
    const abort = new AbortController();
    this.inflight.add(abort);
    const timer = setTimeout(
      () => abort.abort(new Error(`no answer within ${this.policy.timeoutMs} ms`)),
      this.policy.timeoutMs,
    );
    let status: number | null = null;
    let error: string | undefined;
    try {
      const res = await fetch(e.endpoint, { method: 'POST', headers, body, signal: abort.signal, redirect: 'manual' });
      status = res.status;
      // the answer is read (and dropped) so the connection can be reused
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      const reason = abort.signal.aborted ? abort.signal.reason : err;
      error =
        reason instanceof Error
          ? reason.cause instanceof Error
            ? `${reason.message}: ${reason.cause.message}`
            : reason.message
          : String(reason);
    } finally {
      clearTimeout(timer);
      this.inflight.delete(abort);
    }
    const ok = status !== null && status >= 200 && status < 300;
    const again = status === null || status === 408 || status === 429 || status >= 500;
    const last = n + 1 >= this.policy.tries;
    const outcome: DeliveryAttempt['outcome'] = ok
      ? 'delivered'
      : !again
        ? 'refused'
        : last || this.closed
          ? 'failed'
          : 'retry';
    this.record({
      event_id: e.eventId,
      type: e.type,
      hook_hash: e.hookHash,
      endpoint: e.endpoint,
      try: n,
      at: new Date(this.now()).toISOString(),
      http_status: status,
      outcome,
      ...(error !== undefined ? { error } : {}),
    });
    if (outcome === 'retry') {
      const delays = this.policy.delaysMs;
      const wait = delays.length === 0 ? 0 : delays[Math.min(n, delays.length - 1)]!;
      const t = setTimeout(() => {
        this.timers.delete(t);
        this.attempt(e, n + 1);
      }, wait);
      this.timers.add(t);
    } else if (outcome !== 'delivered' && !this.closed) {
      const why = status === null ? error : `HTTP ${status}`;
      this.logger.warn(
        { event_id: e.eventId, type: e.type, endpoint: e.endpoint, tries: n + 1, why },
        `webhook ${e.type} ${e.eventId} not delivered to ${e.endpoint} ` +
          `(${why}${outcome === 'refused' ? ': refused, not tried again' : `, after ${n + 1} tries`})`,
      );
    }
  }

  private record(a: DeliveryAttempt): void {
    this.log.push(a);
    if (this.log.length > MAX_DELIVERY_LOG) this.log.splice(0, this.log.length - MAX_DELIVERY_LOG);
  }
}
