/**
 * One real-time request, from parsed body to reply: find the call's flow version, load its
 * snapshot, advance the engine, save, answer. No Fastify here (the route only wires it),
 * so this is tested directly. Requests of one callid are handled one at a time; a step
 * that misses the deadline gets a fallback reply and still lands (see `handle`).
 */
import { advance, type Outcome } from '../engine/advance.js';
import { serializeReply } from '../engine/serialize.js';
import type { CallState, CallSummary } from '../engine/types.js';
import type { CompiledFlow } from '../engine/compile.js';
import { isTerminal } from '../protocol/request.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Registry } from '../registry/registry.js';
import { LiveCalls } from '../registry/live.js';
import type { Routes } from './options.js';
import type { CallStore } from '../store/types.js';
import type { RtOptions } from './options.js';
import { performEffect, type Effects } from './effects.js';
import type { Exchange } from '../testing/record.js';

/** Time kept back from the deadline for saving the state and answering. */
const EFFECT_MARGIN_MS = 250;

export type Answer =
  | { status: 200; body: string; late?: boolean }
  | { status: 404 | 409 | 500; code: string; message: string };

export interface CallLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export class CallService {
  /** The tail of each callid's queue of requests. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly registry: Registry,
    private readonly store: CallStore,
    private readonly opts: RtOptions,
    private readonly effects: Effects = {},
    private readonly now: () => number = Date.now,
    /** Which version and step each live call is at, and per-version counts (see registry/live.ts). */
    readonly live: LiveCalls = new LiveCalls(opts.callTtlMs, now),
  ) {}

  /** The flow a new call gets: the URL's, else by app, by called number, by default; its version by the flow's pin and canary. */
  route(req: RtRequest, flowName?: string): { flow?: CompiledFlow; name?: string } {
    const r = this.opts.routes;
    const name = flowName ?? r.apps[req.app] ?? r.numbers[req.number] ?? r.default;
    return { name, flow: name === undefined ? undefined : this.registry.pick(name, req.callid) };
  }

  /** New routes (a config reload); live calls are not affected. */
  setRoutes(routes: Routes): void {
    this.opts.routes = routes;
  }

  /** Forgets the live call (its state is dropped) and releases versions no call uses any more. */
  private ended(callid: string): void {
    if (this.live.end(callid)) this.registry.release(this.live);
  }

  /**
   * Requests answered with a fallback, by callid: the fallback's own result, when it comes
   * back, stands for the request it replaced (see `handle`).
   */
  private readonly replaced = new Map<string, { command: string; req: RtRequest }>();

  /**
   * Answers one request before the deadline. If the work is late, the answer is a short
   * fallback command (`wait`, or the configured media) echoing the request's command_id,
   * and the work goes on. When the fallback completes, the service reports it with that
   * command_id; that report is taken as the replaced request again: a retry that gets the
   * reply the late step stored, or, if the step failed, the original result fed anew. So
   * the fallback's own result ("0") is never mistaken for the caller's input.
   */
  async handle(incoming: RtRequest, flowName: string | undefined, log: CallLogger): Promise<Answer> {
    let req = incoming;
    const pending = this.replaced.get(req.callid);
    if (pending) {
      this.replaced.delete(req.callid);
      if (req.command === pending.command && req.command_id === pending.req.command_id && req.command_error === '') req = { ...pending.req, variablesRaw: req.variablesRaw, variables: req.variables };
    }
    const started = this.now();
    const work = this.serialised(req.callid, () => this.step(req, flowName, log, started));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.opts.deadlineMs);
    });
    try {
      const first = await Promise.race([work, late]);
      if (first !== 'late') return first;
      log.warn({ callid: req.callid, code: 'DEADLINE', deadlineMs: this.opts.deadlineMs }, 'step missed the deadline: fallback answered');
      work.catch((err: unknown) => log.error({ callid: req.callid, err }, 'a late step failed: the call stays where it was'));
      if (req.command_id === incoming.command_id) this.replaced.set(req.callid, { command: this.opts.fallback === undefined ? 'wait' : 'play', req });
      return { status: 200, body: fallbackReply(req, this.opts.fallback), late: true };
    } finally {
      clearTimeout(timer);
    }
  }

  private serialised<T>(callid: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(callid) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(callid, tail);
    void tail.then(() => {
      if (this.queues.get(callid) === tail) this.queues.delete(callid);
    });
    return run;
  }

  /** One step, with the live-call bookkeeping: version and step per call, calls and errors per version. */
  private async step(req: RtRequest, flowName: string | undefined, log: CallLogger, started: number): Promise<Answer> {
    if (this.live.purge() > 0) this.registry.release(this.live);
    const seen: Seen = {};
    let answer: Answer | undefined;
    try {
      answer = await this.stepCore(req, flowName, log, started, seen);
      return answer;
    } finally {
      if (seen.flow && (!answer || answer.status >= 500)) this.live.error(seen.flow.name, seen.flow.version);
      // A new call that got no state (rejected, failed) is not live.
      if (seen.isNew && !seen.kept) this.ended(req.callid);
    }
  }

  private async stepCore(req: RtRequest, flowName: string | undefined, log: CallLogger, started: number, seen: Seen): Promise<Answer> {
    const raw = await this.store.get(req.callid);
    let prior: CallState | undefined;
    if (raw !== undefined) {
      prior = decodeState(raw);
      if (!prior) log.error({ callid: req.callid }, 'unreadable call snapshot: treated as unknown call');
    }
    let flow: CompiledFlow | undefined;
    if (prior) {
      if (flowName !== undefined && flowName !== prior.flow) log.warn({ callid: req.callid, flow: prior.flow, url: flowName }, `request for flow "${flowName}" on a call of flow "${prior.flow}": the call stays on its flow`);
      flow = this.registry.get(prior.flow, prior.version);
      if (!flow) {
        if (isTerminal(req.call_status)) {
          await this.store.delete(req.callid);
          this.ended(req.callid);
          return { status: 200, body: hangupReply(req) };
        }
        this.live.error(prior.flow, prior.version);
        return { status: 500, code: 'FLOW_VERSION_GONE', message: `the call runs flow ${prior.flow} version ${prior.version}, which is no longer loaded` };
      }
    } else {
      const routed = this.route(req, flowName);
      flow = routed.flow;
      if (!flow) {
        // A terminal request for a call we never knew: nothing to run, answer hangup.
        if (isTerminal(req.call_status)) return { status: 200, body: hangupReply(req) };
        if (routed.name !== undefined) return { status: 404, code: 'UNKNOWN_FLOW', message: `no flow named "${routed.name}" is loaded` };
        return { status: 404, code: 'NO_ROUTE', message: `no route for app "${req.app}" or number "${req.number}" and no default flow` };
      }
      // Counted live from now: a reload while this step runs must not release its version.
      this.live.set(req.callid, flow.name, flow.version, flow.model.start);
      seen.isNew = true;
    }
    seen.flow = flow;
    const at = this.now();
    let outcome: Outcome = advance(flow, prior, req, { now: at, unknownCall: this.opts.unknownCall });
    const effects: Exchange['effects'] = [];
    while (outcome.kind === 'effect') {
      const budget = this.opts.deadlineMs - (this.now() - started) - EFFECT_MARGIN_MS;
      const result = await performEffect(this.effects, outcome.effect, budget);
      if (this.opts.recorder) effects.push({ effect: outcome.effect, result });
      if (result.ok) log.debug({ callid: req.callid, effect: outcome.effect.kind, step: outcome.effect.step, value: result.value }, `${outcome.effect.kind} done`);
      outcome = outcome.resume(result);
    }
    switch (outcome.kind) {
      case 'replay':
        log.debug({ callid: req.callid, command_id: req.command_id }, 'retried request: previous reply sent again');
        return { status: 200, body: outcome.replyJson };
      case 'stale':
        return { status: 409, code: 'STALE_REQUEST', message: outcome.message };
      case 'rejected':
        return { status: outcome.code === 'UNKNOWN_CALL' ? 404 : 500, code: outcome.code, message: outcome.message };
      case 'reply': {
        for (const { level, msg, ...fields } of outcome.log ?? []) log[level === 'error' ? 'error' : level === 'warn' ? 'warn' : 'info']({ callid: req.callid, ...fields }, msg);
        if (seen.isNew) this.live.started(flow.name, flow.version);
        if (req.command_error !== '' || (outcome.log ?? []).some((l) => l.level === 'error')) this.live.error(flow.name, flow.version);
        if (outcome.state) {
          await this.store.set(req.callid, encodeState(outcome.state), this.opts.callTtlMs);
          this.live.set(req.callid, outcome.state.flow, outcome.state.version, outcome.state.step);
          seen.kept = true;
        } else {
          await this.store.delete(req.callid);
          this.ended(req.callid);
        }
        if (outcome.summary) logSummary(log, outcome.summary);
        this.opts.recorder?.exchange({ request: req, flow: { name: flow.name, version: flow.version }, now: at, effects, reply: outcome.reply, ...(outcome.state ? { step: outcome.state.step } : {}), ended: !outcome.state });
        return { status: 200, body: outcome.replyJson };
      }
    }
  }
}

/** What a step found out, for the bookkeeping around it. */
interface Seen {
  flow?: CompiledFlow;
  /** The call started with this request. */
  isNew?: boolean;
  /** Its state was saved. */
  kept?: boolean;
}

function logSummary(log: CallLogger, s: CallSummary): void {
  log.info(
    { callid: s.callid, flow: s.flow, version: s.version, status: s.status, commands: s.commands, durationMs: s.durationMs, lastStep: s.lastStep, vars: s.vars },
    'call ended',
  );
}

export function encodeState(s: CallState): string {
  return JSON.stringify(s);
}

export function decodeState(raw: string): CallState | undefined {
  try {
    const s = JSON.parse(raw) as CallState;
    return s && s.v === 2 && typeof s.flow === 'string' && typeof s.commandId === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

function hangupReply(req: RtRequest): string {
  return serializeReply({ command: 'hangup', command_id: req.command_id + 1, params: {}, variablesRaw: req.variablesRaw });
}

/**
 * What a late step answers: a short command echoing the request's command_id, so that
 * the request that follows it is taken as a retry and gets the step's stored reply.
 */
function fallbackReply(req: RtRequest, media: string | undefined): string {
  return media === undefined
    ? serializeReply({ command: 'wait', command_id: req.command_id, params: { wait: 1 }, variablesRaw: req.variablesRaw })
    : serializeReply({ command: 'play', command_id: req.command_id, params: { media_id: media }, variablesRaw: req.variablesRaw });
}
