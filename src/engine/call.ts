/**
 * The call step as a whole, for one parsed real-time request: find the call's flow version
 * (its pinned one, or a new call's by route, pin and canary), load its snapshot, step the
 * machine (`advance`), perform effects within the time left, save, answer. The server and
 * any other front end call `handle`; the store, the flow versions, the effects and the
 * live-call bookkeeping are interfaces given by the caller (no HTTP, no Fastify here).
 *
 * - Requests of one callid run one at a time in this process (a per-callid queue, made only
 *   when a second request of the same call arrives while the first runs). Across processes
 *   sharing a store, a step is committed with a compare-and-set on the call's revision: of
 *   two copies of one request, one advances the call and the other, finding the revision
 *   changed, reads the new state and answers the stored reply (same bytes). A step that
 *   performs an effect (an SMS) first commits a claim (the state unchanged, marked with the
 *   request and a time limit): other instances wait for it instead of sending the SMS again,
 *   and take the call over if the claim expires (its instance died).
 * - Every request is answered before the deadline: a late step gets a fallback reply
 *   (`wait`, or the configured media) and still lands; the fallback's own result, when it
 *   comes back, stands for the request it replaced (see `handle`). One timer serves every
 *   pending request (deadlines are equal, so they expire in arrival order).
 */
import { settleIdleCalls, type RevisionReader, type SettlingLive } from './live-check.js';
import { advance, type Outcome } from './advance.js';
import type { CompiledFlow } from './compile.js';
import type { Effect, EffectResult, EngineOptions } from './outcome.js';
import { serializeReply } from './serialize.js';
import type { CallState, CallSummary } from './types.js';
import { isTerminal } from '../protocol/request.js';
import type { RtRequest, RtResponse } from '../protocol/rt.js';
import type { EvalLimits } from '../flow/budget.js';
import { MASK } from './mask.js';
import { openState, sealState, type Sealer } from './seal.js';
import { maskLog, maskStepRecord, maskSummary, requestMasker, resultIsSensitive } from './mask-call.js';
import type { LookupRecord, Lookups } from './http-wait.js';
import { callOutcomeOf, type EffectEvent, type RequestOutcome, type StepEvent, type StepObserver } from './observe.js';
import { startVars, type OutboundStarts } from './outbound.js';
import type { Value } from '../flow/model.js';

/** Time kept back from the deadline for saving the state and answering. */
const EFFECT_MARGIN_MS = 250;

/**
 * What the store keeps for an ended call (a tombstone), for `endedTtlMs`: a late request of
 * that call (a retried HANGUP, a request delayed in the network) is answered `hangup`
 * instead of restarting the flow under `unknown_call: restart`.
 */
export const ENDED = '{"v":2,"ended":true}';
/** Live calls one process serves at most by default (each holds its state and bookkeeping). */
export const DEFAULT_MAX_LIVE_CALLS = 50_000;

/** How long ended calls are remembered by default: 10 minutes. */
export const DEFAULT_ENDED_TTL_MS = 10 * 60 * 1000;

export type Answer =
  { status: 200; body: string; late?: boolean } | { status: 404 | 409 | 500 | 503; code: string; message: string };

export interface CallLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Where call snapshots live (src/store: memory or Redis, see CallStore there); values are JSON text. */
export interface SnapshotStore {
  /** The call's value and revision, and its aside (taken, unless `keepAside`). */
  load(callid: string, keepAside?: boolean): Promise<{ call?: { value: string; rev: number }; aside?: string }>;
  /** Compare-and-set on the revision; the new revision, or undefined when it had changed. */
  commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined>;
  setAside(callid: string, aside: string, ttlMs: number): Promise<void>;
  /**
   * Each call's committed revision (undefined: none): a shared store has it, to check the live calls idle here
   * (src/engine/live-check.ts).
   */
  revisions?(callids: readonly string[]): Promise<(number | undefined)[]>;
}

/** How often a request waiting for another instance's claim on its call reads the call again. */
const CLAIM_POLL_MS = 20;
/** A claim outlives the deadline by this much: an effect answered just in time still commits. */
const CLAIM_SLACK_MS = 1000;
/** Compare-and-set attempts of one request before it gives up (never reached but by a bug). */
const MAX_ATTEMPTS = 50;

/** The loaded flow versions (src/registry). */
export interface FlowVersions {
  /** A version a live call is pinned to. */
  get(name: string, version: string): CompiledFlow | undefined;
  /** The version a new call of this flow gets (pin, canary). */
  pick(name: string, callid: string): CompiledFlow | undefined;
  /** A version this process does not have, from where instances share them (a call started elsewhere). */
  fetch?(name: string, version: string): Promise<CompiledFlow | undefined>;
}

/** Which version and step each live call is at, and counts per version (src/registry/live.ts). */
export interface LiveTracker extends Partial<SettlingLive> {
  set(callid: string, flow: string, version: string, step: string, rev?: number): void;
  /** The call is over; truthy when it was live. */
  end(callid: string): unknown;
  /** Forgets calls idle past their TTL; the number forgotten. */
  purge(): number;
  started(flow: string, version: string): void;
  error(flow: string, version: string): void;
  /** Live calls tracked now. */
  readonly size: number;
}

export interface Routes {
  /** By the request's `app` (the REALTIME10 application hash). */
  apps: Record<string, string>;
  /** By the called `number` (E.164). */
  numbers: Record<string, string>;
  /** When neither matches. */
  default?: string;
}

/**
 * Routes as the lookups use them: Maps of the own entries only, so that a request's `app`
 * or `number` ("constructor", "__proto__", "toString") never finds a member of
 * Object.prototype.
 */
interface RouteTables {
  apps: Map<string, string>;
  numbers: Map<string, string>;
  default: string | undefined;
}

function routeTables(r: Routes): RouteTables {
  const table = (o: Record<string, string> | undefined) =>
    new Map(Object.entries(o ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { apps: table(r.apps), numbers: table(r.numbers), default: r.default };
}

/**
 * One request the engine advanced, with what it did: its effects and its reply (recordings,
 * `serve --record`). What a replay needs to step the call again as it went: the request, the
 * call's clock, the start vars of an outbound call, the environment, each effect's request and
 * answer. Sensitive values and secrets are masked (src/engine/mask-call.ts, recordable below).
 */
export interface StepRecord {
  request: RtRequest;
  flow: { name: string; version: string };
  /** The environment the flow was served in (version 2 `environments:`), if it has one. */
  environment?: string;
  /** Epoch ms the engine was given for this request: the call's clock. */
  now: number;
  /** The vars the call started with, given when it was placed (an outbound call's first request only). */
  vars?: Record<string, Value>;
  /**
   * The effects performed for this request, in order, with their outcomes. An http lookup's params are its
   * method, URL, headers and body as sent, with the flow's secrets replaced by ***.
   */
  effects: { effect: Effect; result: EffectResult }[];
  /** The reply answered. */
  reply: RtResponse;
  /** The flow step of the reply (the call's step after this request), when the call goes on. */
  step?: string;
  /** The call ended with this request (its state was dropped). */
  ended: boolean;
}

export interface CallObserver {
  exchange(ex: StepRecord): void;
}

export interface CallOptions {
  deadlineMs: number;
  callTtlMs: number;
  /** How long an ended call's tombstone is kept (default 10 min). */
  endedTtlMs?: number;
  /** The cap on a call's stored state, in bytes (default 32 KB): EngineOptions.maxStateBytes. */
  maxStateBytes?: number;
  /** What one request's templates and expressions may spend: EngineOptions.evalLimits. */
  evalLimits?: EvalLimits;
  /** New calls are refused (503 CALL_LIMIT) while this many are live here (default 50,000). */
  maxLiveCalls?: number;
  /** How often calls idle past callTtlMs leave the live-call bookkeeping (default: min(callTtlMs, 60 s)). */
  liveSweepMs?: number;
  /**
   * With a store shared by several processes (and its `revisions`): how often the calls idle here that long are checked
   * against it, and leave when answered or ended elsewhere (src/engine/live-check.ts). Absent: no check (one process
   * sees every request).
   */
  liveCheckMs?: number;
  unknownCall: EngineOptions['unknownCall'];
  routes: Routes;
  /** The rt_media played when a step misses the deadline; without it, a 1-second `wait`. */
  fallback?: string;
  recorder?: CallObserver;
  /**
   * Seals sensitive values in the stored state and asides (CALLSCRIPT_SENSITIVE_KEY); without it they are stored as
   * they are.
   */
  sealer?: Sealer;
  /** Reads a secret a flow declares (its http steps' secrets.X): the server reads the environment. */
  secret?: (name: string) => string | undefined;
  /** Told of every request handled, once its work is over (metrics, traces, call history: src/engine/observe.ts). */
  observer?: StepObserver;
}

export interface CallDeps {
  versions: FlowVersions;
  store: SnapshotStore;
  live: LiveTracker;
  /** Versions no live call uses may go (after a call ends or calls are purged). */
  release(): void;
  /** Performs an effect within `budgetMs`; never throws. */
  perform(effect: Effect, budgetMs: number): Promise<EffectResult>;
  /**
   * Performs http lookups, waiting across requests (src/engine/http-wait.ts); absent: http steps fail with UNAVAILABLE.
   */
  lookups?: Lookups;
  /**
   * Outbound calls placed by the server: a new call whose request_hash is one of theirs starts with its vars
   * (src/engine/outbound.ts).
   */
  outbound?: OutboundStarts;
  now?: () => number;
}

interface Pending {
  at: number;
  fire(): void;
}

export class CallHandler {
  private readonly now: () => number;
  /** The request running per callid, and the ones waiting behind it. */
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly pending = new Set<Pending>();
  private timer: NodeJS.Timeout | undefined;
  /** Purges idle calls from the live-call bookkeeping on a timer, not only when requests come. */
  private readonly liveSweep: NodeJS.Timeout;
  /** Checks the calls idle here against a shared store (absent: the store cannot tell). */
  private readonly liveCheck: NodeJS.Timeout | undefined;
  private checking = false;
  private routes: RouteTables;

  constructor(
    private readonly deps: CallDeps,
    private readonly opts: CallOptions,
  ) {
    this.now = deps.now ?? Date.now;
    this.routes = routeTables(opts.routes);
    this.liveSweep = setInterval(() => this.purgeLive(), opts.liveSweepMs ?? Math.min(opts.callTtlMs, 60_000));
    this.liveSweep.unref?.();
    const every = opts.liveCheckMs;
    if (every !== undefined && deps.store.revisions) {
      this.liveCheck = setInterval(() => void this.checkLive(every), every);
      this.liveCheck.unref?.();
    }
  }

  /**
   * Forgets the calls idle here for `idleMs` that were answered, ended or dropped elsewhere (a shared store); the
   * number forgotten. A failing store is tried again next time.
   */
  async checkLive(idleMs: number): Promise<number> {
    const { store, live } = this.deps;
    if (this.checking || !store.revisions || !live.idleSince || !live.settle) return 0;
    this.checking = true;
    try {
      const n = await settleIdleCalls(live as SettlingLive, store as RevisionReader, this.now() - idleMs, (callid) =>
        this.running.has(callid),
      );
      if (n > 0) this.deps.release();
      return n;
    } catch {
      return 0;
    } finally {
      this.checking = false;
    }
  }

  /** Forgets calls idle past their TTL and releases the versions no call uses any more. */
  purgeLive(): void {
    if (this.deps.live.purge() > 0) this.deps.release();
  }

  /**
   * The flow a new call gets: the URL's, else by app, by called number, by default; its version by the flow's pin and
   * canary.
   */
  route(req: RtRequest, flowName?: string): { flow?: CompiledFlow; name?: string } {
    const r = this.routes;
    const name = flowName ?? r.apps.get(req.app) ?? r.numbers.get(req.number) ?? r.default;
    return { name, flow: name === undefined ? undefined : this.deps.versions.pick(name, req.callid) };
  }

  /** New routes (a config reload); live calls are not affected. */
  setRoutes(routes: Routes): void {
    this.opts.routes = routes;
    this.routes = routeTables(routes);
  }

  /**
   * Answers one request before the deadline. If the work is late, the answer is a short
   * fallback command (`wait`, or the configured media) echoing the request's command_id,
   * and the work goes on. When the fallback completes, the service reports it with that
   * command_id; that report is taken as the replaced request again: a retry that gets the
   * reply the late step stored, or, if the step failed, the original result fed anew. So
   * the fallback's own result ("0") is never mistaken for the caller's input.
   */
  handle(incoming: RtRequest, flowName: string | undefined, log: CallLogger, traceId?: string): Promise<Answer> {
    const req = incoming;
    let stepped: RtRequest = req;
    const observer = this.opts.observer;
    const seen: Seen = observer ? { transitions: observer.transitions ? [] : undefined, effects: [] } : {};
    const at = observer ? this.now() : 0;
    const t0 = observer ? performance.now() : 0;
    let late = false;
    const work = this.serialised(req.callid, () =>
      this.step(req, flowName, log, this.now(), (r) => (stepped = r), seen),
    );
    if (observer) {
      const tell = (answer: Answer | undefined) => {
        try {
          const e = stepEvent(stepped, seen, answer, late, at, performance.now() - t0);
          if (traceId !== undefined) e.traceId = traceId;
          observer.step(e);
        } catch (err) {
          log.error({ callid: req.callid, err }, 'an observer of the call step failed');
        }
      };
      // a store failure is answered 503 STORE_UNAVAILABLE (below), any other failure 500
      work.then(tell, (err: unknown) =>
        tell(isStoreUnavailable(err) ? { status: 503, code: 'STORE_UNAVAILABLE', message: '' } : undefined),
      );
    }
    return new Promise<Answer>((resolve) => {
      let done = false;
      const entry: Pending = {
        at: performance.now() + this.opts.deadlineMs,
        fire: () => {
          if (done) return;
          done = true;
          late = true;
          log.warn(
            { callid: req.callid, code: 'DEADLINE', deadlineMs: this.opts.deadlineMs },
            'step missed the deadline: fallback answered',
          );
          // The fallback's result stands for the request it replaced: noted with the call (any instance may get it).
          const aside: Replaced = {
            fb: this.opts.fallback === undefined ? 'wait' : 'play',
            ...requestPart(stepped, this.opts.sealer),
          };
          const noted = this.deps.store
            .setAside(req.callid, JSON.stringify(aside), this.opts.callTtlMs)
            .catch((err: unknown) =>
              log.error({ callid: req.callid, err }, 'the fallback could not be noted in the store'),
            );
          // answered once noted, or at once if the store is slow: the reply must go out in time
          void Promise.race([noted, new Promise((r) => setTimeout(r, ASIDE_WAIT_MS).unref?.())]).then(() =>
            resolve({ status: 200, body: fallbackReply(req, this.opts.fallback), late: true }),
          );
        },
      };
      this.addPending(entry);
      work.then(
        (answer) => {
          this.pending.delete(entry);
          if (done) return;
          done = true;
          resolve(answer);
        },
        (err: unknown) => {
          this.pending.delete(entry);
          if (done) {
            log.error({ callid: req.callid, err }, 'a late step failed: the call stays where it was');
            return;
          }
          done = true;
          if (isStoreUnavailable(err)) {
            log.error(
              { callid: req.callid, code: 'STORE_UNAVAILABLE', err: (err as Error).message },
              'the call store is unavailable: the service will retry',
            );
            resolve({
              status: 503,
              code: 'STORE_UNAVAILABLE',
              message: `the call store is unavailable (${(err as Error).message}); nothing was changed, retry`,
            });
            return;
          }
          log.error({ callid: req.callid, err }, 'the step failed: the call stays where it was');
          resolve({ status: 500, code: 'INTERNAL', message: 'the step failed; the call state was not changed' });
        },
      );
    });
  }

  /**
   * Ends a live call from outside (the admin API): its state becomes the tombstone, by a
   * compare-and-set on its revision (retried when a request of the call committed
   * meanwhile), so the service's next request of the call is answered `hangup`. Runs after
   * the requests of the call in progress here. `busy`: another instance holds a claim on
   * the call (a step performing an effect): nothing was changed. `not_live`: no state (never
   * seen, ended, expired, or only a claim of a first request that died).
   */
  endCall(
    callid: string,
  ): Promise<{ kind: 'ended'; state: CallState } | { kind: 'busy'; until: number } | { kind: 'not_live' }> {
    return this.serialised(callid, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        // the aside stays: if the call is not ended here, its next request still needs it
        const loaded = await this.deps.store.load(callid, true);
        const raw = loaded.call?.value;
        if (raw === undefined || raw === ENDED) return { kind: 'not_live' as const };
        const claim = claimOf(raw);
        if (claim && claim.until > this.now()) return { kind: 'busy' as const, until: claim.until };
        const state = decodeState(raw);
        if (!state) return { kind: 'not_live' as const };
        if (await this.bury(callid, loaded.call!.rev)) return { kind: 'ended' as const, state };
      }
      throw new Error(`call ${callid}: ${MAX_ATTEMPTS} compare-and-set attempts failed`);
    });
  }

  /** Stops the deadline and sweep timers (the server closes). */
  close(): void {
    clearInterval(this.liveSweep);
    if (this.liveCheck) clearInterval(this.liveCheck);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private addPending(p: Pending): void {
    this.pending.add(p);
    if (!this.timer) this.schedule(p.at);
  }

  private schedule(at: number): void {
    this.timer = setTimeout(() => this.sweep(), Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref?.();
  }

  /** Fires every pending request whose deadline has come (they expire in arrival order). */
  private sweep(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const p of this.pending) {
      if (p.at > now) {
        this.schedule(p.at);
        return;
      }
      this.pending.delete(p);
      p.fire();
    }
  }

  private serialised<T>(callid: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.running.get(callid);
    const run = prev ? prev.then(fn, fn) : fn();
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(callid, tail);
    void tail.then(() => {
      if (this.running.get(callid) === tail) this.running.delete(callid);
    });
    return run;
  }

  /** The state as stored: its sensitive values sealed when a key is configured (src/engine/seal.ts); else itself. */
  private sealed(flow: CompiledFlow, state: CallState, callid: string): CallState {
    const sens = flow.tables.sensitive;
    return sens && this.opts.sealer ? sealState(state, sens, this.opts.sealer, callid) : state;
  }

  private ended(callid: string): void {
    if (this.deps.live.end(callid)) this.deps.release();
  }

  /** The call is over: its state is replaced by a tombstone, so a late request cannot restart it. */
  private async bury(callid: string, rev: number | undefined): Promise<boolean> {
    const done =
      (await this.deps.store.commit(callid, rev, ENDED, this.opts.endedTtlMs ?? DEFAULT_ENDED_TTL_MS)) !== undefined;
    if (done) this.ended(callid);
    return done;
  }

  /**
   * The vars an outbound call placed by the server starts with (null: not one, or none given); the dropped ones logged.
   */
  private async outboundVars(
    req: RtRequest,
    flow: CompiledFlow,
    log: CallLogger,
  ): Promise<Record<string, Value> | null> {
    const given = await this.deps.outbound!.start(req.request_hash!, req.callid, req.call_status);
    if (!given) return null;
    const { vars, dropped } = startVars(flow.tables.initialVars, given);
    if (dropped.length > 0) {
      log.warn(
        {
          callid: req.callid,
          code: 'OUTBOUND_VARS_DROPPED',
          id: req.request_hash,
          flow: flow.name,
          dropped: dropped.map((d) => d.name),
        },
        `outbound call ${req.request_hash}: vars ${dropped.map((d) => `${d.name} (${d.why})`).join(', ')} not set`,
      );
    }
    return Object.keys(vars).length > 0 ? vars : null;
  }

  /** One step, with the live-call bookkeeping: version and step per call, calls and errors per version. */
  private async step(
    req: RtRequest,
    flowName: string | undefined,
    log: CallLogger,
    started: number,
    stepped: (r: RtRequest) => void,
    seen: Seen,
  ): Promise<Answer> {
    let answer: Answer | undefined;
    try {
      let r = req;
      for (let attempt = 1; ;) {
        const loaded = await this.deps.store.load(req.callid);
        if (loaded.aside !== undefined && r === req) r = substitute(req, loaded.aside, this.opts.sealer);
        stepped(r);
        answer = await this.stepCore(r, loaded.call, flowName, log, started, seen);
        // waiting for another instance's claim is not a failed attempt (stepCore bounds the wait)
        if (answer === WAIT) continue;
        if (answer !== RETRY) return answer;
        if (++attempt > MAX_ATTEMPTS)
          throw new Error(`call ${req.callid}: ${MAX_ATTEMPTS} compare-and-set attempts failed`);
      }
    } finally {
      if (seen.flow && (!answer || answer.status >= 500)) this.deps.live.error(seen.flow.name, seen.flow.version);
      // A new call that got no state (rejected, failed) is not live.
      if (seen.isNew && !seen.kept) this.ended(req.callid);
    }
  }

  /**
   * One attempt at the step from the call's record as loaded; RETRY when the record changed
   * meanwhile (another instance committed), WAIT when another instance holds a claim on the
   * call (until it expires, or this request has waited as long as a claim may last: the
   * claim's time is the other instance's clock).
   */
  private async stepCore(
    req: RtRequest,
    record: { value: string; rev: number } | undefined,
    flowName: string | undefined,
    log: CallLogger,
    started: number,
    seen: Seen,
  ): Promise<Answer> {
    const { store, live } = this.deps;
    if (seen.transitions) seen.transitions.length = 0;
    if (seen.effects) seen.effects.length = 0;
    const raw = record?.value;
    let rev = record?.rev;
    if (raw === ENDED) {
      // ended elsewhere (another instance, the admin API): no longer live here either
      this.ended(req.callid);
      if (!isTerminal(req.call_status))
        log.warn(
          { callid: req.callid, code: 'CALL_ENDED', command: req.command, command_id: req.command_id },
          'request for a call that has ended: answered hangup',
        );
      return { status: 200, body: hangupReply(req) };
    }
    let prior: CallState | undefined;
    if (raw !== undefined) {
      const claim = claimOf(raw);
      seen.waitingSince ??= claim ? this.now() : undefined;
      if (
        claim &&
        claim.until > this.now() &&
        this.now() - seen.waitingSince! < this.opts.deadlineMs + CLAIM_SLACK_MS
      ) {
        // another instance performs this call's effects: wait for it (it commits, or its claim expires)
        await sleep(CLAIM_POLL_MS);
        return WAIT;
      }
      prior = decodeState(raw);
      if (prior?.x !== undefined) {
        const opened = openState(prior, this.opts.sealer, req.callid);
        prior = opened.state;
        if (opened.problem)
          log.error(
            { callid: req.callid, code: 'SENSITIVE_UNREADABLE' },
            `call ${req.callid}: ${opened.problem}; they read *** from now on`,
          );
      }
      if (!prior && !claim) log.error({ callid: req.callid }, 'unreadable call snapshot: treated as unknown call');
      if (claim)
        log.warn(
          { callid: req.callid, code: 'CLAIM_EXPIRED', request: claim.req },
          "another instance's step on this call did not finish in time (was it killed?): taking the call over",
        );
    }
    let flow: CompiledFlow | undefined;
    if (prior) {
      if (flowName !== undefined && flowName !== prior.flow)
        log.warn(
          { callid: req.callid, flow: prior.flow, url: flowName },
          `request for flow "${flowName}" on a call of flow "${prior.flow}": the call stays on its flow`,
        );
      flow =
        this.deps.versions.get(prior.flow, prior.version) ??
        (await this.deps.versions.fetch?.(prior.flow, prior.version));
      if (!flow) {
        if (isTerminal(req.call_status)) {
          if (!(await this.bury(req.callid, rev))) return RETRY;
          return { status: 200, body: hangupReply(req) };
        }
        live.error(prior.flow, prior.version);
        return {
          status: 500,
          code: 'FLOW_VERSION_GONE',
          message: `the call runs flow ${prior.flow} version ${prior.version}, which is no longer loaded`,
        };
      }
    } else {
      const routed = this.route(req, flowName);
      flow = routed.flow;
      if (!flow) {
        // A terminal request for a call we never knew: nothing to run, answer hangup.
        if (isTerminal(req.call_status)) return { status: 200, body: hangupReply(req) };
        if (routed.name !== undefined)
          return { status: 404, code: 'UNKNOWN_FLOW', message: `no flow named "${routed.name}" is loaded` };
        return {
          status: 404,
          code: 'NO_ROUTE',
          message: `no route for app "${req.app}" or number "${req.number}" and no default flow`,
        };
      }
      if (!isTerminal(req.call_status) && live.size >= (this.opts.maxLiveCalls ?? DEFAULT_MAX_LIVE_CALLS)) {
        log.warn(
          { callid: req.callid, code: 'CALL_LIMIT', live: live.size },
          'a new call was refused: as many calls are live as limits.max_live_calls allows',
        );
        return {
          status: 503,
          code: 'CALL_LIMIT',
          message:
            `${live.size} calls are live here, the most limits.max_live_calls allows: the service may place it ` +
            `on another instance or retry`,
        };
      }
      // Counted live from now: a reload while this step runs must not release its version.
      live.set(req.callid, flow.name, flow.version, flow.model.start);
      seen.isNew = true;
    }
    seen.flow = flow;
    seen.prior = prior;
    // an outbound call placed by the server: its vars, once per request (a retried attempt reuses them)
    if (!prior && req.request_hash && this.deps.outbound && seen.outbound === undefined)
      seen.outbound = await this.outboundVars(req, flow, log);
    const at = this.now();
    const took = seen.transitions;
    let outcome: Outcome = advance(flow, prior, req, {
      now: at,
      unknownCall: this.opts.unknownCall,
      ...(seen.outbound ? { vars: seen.outbound } : {}),
      ...(this.opts.maxStateBytes !== undefined ? { maxStateBytes: this.opts.maxStateBytes } : {}),
      ...(this.opts.evalLimits ? { evalLimits: this.opts.evalLimits } : {}),
      ...(this.opts.secret ? { secret: this.opts.secret } : {}),
      ...(took ? { hooks: { took: (k: string) => void took.push(k) } } : {}),
    });
    const recorder = this.opts.recorder;
    const effects: StepRecord['effects'] = [];
    // the effects' time runs from the request's start, or, for a call taken over from another
    // instance's claim (this request waited for it, past its own deadline), from its own claim
    let from = started;
    if (outcome.kind === 'effect') {
      // no other instance may perform this request's effects meanwhile: claim the call first
      const claimedAt = this.now();
      const claim: Claim = {
        req: `${req.command_id}:${req.command}:${req.call_status}`,
        until: claimedAt + this.opts.deadlineMs + CLAIM_SLACK_MS,
      };
      const claimed = await store.commit(
        req.callid,
        rev,
        withClaim(prior && this.sealed(flow, prior, req.callid), claim),
        this.opts.callTtlMs,
      );
      if (claimed === undefined) return RETRY;
      rev = claimed;
      if (seen.waitingSince !== undefined) from = claimedAt;
    }
    // http lookups: the record of one still running (kept with the call), and how many this call started
    let lookup: LookupRecord | undefined;
    let lookups = prior?.hn ?? 0;
    while (outcome.kind === 'effect') {
      const budget = this.opts.deadlineMs - (this.now() - from) - EFFECT_MARGIN_MS;
      const e0 = seen.effects ? performance.now() : 0;
      /** Epoch ms a lookup that an earlier request started (and this one takes the result of) began. */
      let began: number | undefined;
      let result: EffectResult;
      if (outcome.effect.kind === 'http') {
        if (!this.deps.lookups)
          result = { ok: false, error: 'UNAVAILABLE', message: 'http lookups are not enabled here' };
        else {
          const r = await this.deps.lookups.perform(outcome.effect, prior?.lk, lookups, budget);
          if (r.started) lookups++;
          else if (outcome.effect.wait && prior?.lk && !('pending' in r.result)) began = prior.lk.started;
          lookup = r.lk;
          result = r.result;
        }
      } else result = await this.deps.perform(outcome.effect, budget);
      if (recorder) effects.push({ effect: recordable(outcome.effect, flow.model.secrets, this.opts.secret), result });
      // a lookup's time is its whole run, from the request that started it to this result
      if (seen.effects)
        seen.effects.push(
          effectEvent(
            outcome.effect,
            result,
            began !== undefined ? Math.max(0, this.now() - began) : performance.now() - e0,
            flow.tables.sensitive?.steps.has(outcome.effect.step) === true,
          ),
        );
      if ('pending' in result)
        log.debug(
          { callid: req.callid, effect: 'http', step: outcome.effect.step },
          'http lookup runs on: filler answered',
        );
      else if (result.ok)
        log.debug(
          {
            callid: req.callid,
            effect: outcome.effect.kind,
            step: outcome.effect.step,
            value: flow.tables.sensitive?.steps.has(outcome.effect.step) ? MASK : result.value,
          },
          `${outcome.effect.kind} done`,
        );
      outcome = outcome.resume(result);
    }
    switch (outcome.kind) {
      case 'replay':
        seen.replayed = true;
        log.debug({ callid: req.callid, command_id: req.command_id }, 'retried request: previous reply sent again');
        return { status: 200, body: outcome.replyJson };
      case 'stale':
        return { status: 409, code: 'STALE_REQUEST', message: outcome.message };
      case 'rejected':
        return { status: outcome.code === 'UNKNOWN_CALL' ? 404 : 500, code: outcome.code, message: outcome.message };
      case 'reply': {
        const logs = outcome.log;
        // a flow with sensitive values: what leaves the process (logs, summary, recording) is masked
        const sens = flow.tables.sensitive;
        const masker = sens ? requestMasker(sens, req, prior, [outcome.state?.vars, outcome.summary?.vars]) : undefined;
        if (logs)
          for (const entry of logs) {
            const { level, msg, ...fields } = masker ? maskLog(entry, masker) : entry;
            log[level === 'error' ? 'error' : level === 'warn' ? 'warn' : 'info'](
              { callid: req.callid, ...fields },
              msg,
            );
          }
        if (seen.isNew) live.started(flow.name, flow.version);
        if (req.command_error !== '' || (logs && logs.some((l) => l.level === 'error')))
          live.error(flow.name, flow.version);
        if (outcome.state) {
          const sealed = this.sealed(flow, outcome.state, req.callid);
          let json = sealed === outcome.state ? (outcome.stateJson ?? encodeState(outcome.state)) : encodeState(sealed);
          // the lookup bookkeeping rides along with the engine's state (appended: no second stringify)
          if (lookups > 0) json = `${json.slice(0, -1)},"hn":${lookups}}`;
          if (lookup) json = `${json.slice(0, -1)},"lk":${JSON.stringify(lookup)}}`;
          const committed = await store.commit(req.callid, rev, json, this.opts.callTtlMs);
          if (committed === undefined) return RETRY;
          live.set(req.callid, outcome.state.flow, outcome.state.version, outcome.state.step, committed);
          seen.kept = true;
        } else if (!(await this.bury(req.callid, rev))) return RETRY;
        // the call's summary as it leaves the process (the log line, the observers): masked once
        const summary = outcome.summary && sens ? maskSummary(outcome.summary, sens) : outcome.summary;
        if (summary) logSummary(log, summary);
        if (recorder) {
          const rec: StepRecord = {
            request: req,
            flow: { name: flow.name, version: flow.version },
            ...(flow.model.environment !== undefined ? { environment: flow.model.environment } : {}),
            now: at,
            ...(seen.outbound ? { vars: seen.outbound } : {}),
            effects,
            reply: outcome.reply,
            ...(outcome.state ? { step: outcome.state.step } : {}),
            ended: !outcome.state,
          };
          recorder.exchange(sens ? maskStepRecord(rec, sens, prior, masker!) : rec);
        }
        if (seen.effects) {
          // what the observers get (src/engine/observe.ts): sensitive values masked
          const params = outcome.reply.params as Record<string, unknown>;
          seen.reply = {
            command: outcome.reply.command,
            commandId: outcome.reply.command_id,
            params: masker ? (masker.scrubValue(params) as Record<string, unknown>) : params,
          };
          seen.step = outcome.state?.step ?? outcome.summary?.lastStep ?? prior?.step;
          seen.ended = !outcome.state;
          if (summary) seen.summary = summary;
          if (logs) for (const l of logs) if (l.level === 'error') (seen.errors ??= []).push(l.code ?? 'ERROR');
          if (sens && req.command_result !== '' && resultIsSensitive(sens, prior)) seen.maskedResult = true;
        }
        return { status: 200, body: outcome.replyJson };
      }
    }
  }
}

/** What a step found out, for the bookkeeping around it. */
interface Seen {
  /** The vars of the outbound call this request starts (null: none). */
  outbound?: Record<string, Value> | null;
  flow?: CompiledFlow;
  /** The call started with this request. */
  isNew?: boolean;
  /** Its state was saved. */
  kept?: boolean;
  /** When this request found the call claimed by another instance. */
  waitingSince?: number;
  // What the observers are told (only gathered when there are observers: `effects` is set then).
  /** The transitions taken (coverage keys), when an observer asked for them. */
  transitions?: string[];
  effects?: EffectEvent[];
  prior?: CallState;
  reply?: StepEvent['reply'];
  step?: string;
  ended?: boolean;
  summary?: CallSummary;
  errors?: string[];
  /** The request's result is a sensitive input. */
  maskedResult?: boolean;
  /** The stored reply was sent again. */
  replayed?: boolean;
}

function effectEvent(e: Effect, r: EffectResult, ms: number, sensitive: boolean): EffectEvent {
  if ('pending' in r) return { kind: e.kind, step: e.step, outcome: 'pending', ms };
  if (r.ok) return { kind: e.kind, step: e.step, outcome: 'ok', value: sensitive ? MASK : r.value, ms };
  return { kind: e.kind, step: e.step, outcome: r.error, ms };
}

const OUTCOMES: Record<string, RequestOutcome> = {
  STALE_REQUEST: 'stale',
  NO_ROUTE: 'no_route',
  UNKNOWN_FLOW: 'no_route',
  CALL_LIMIT: 'call_limit',
  STORE_UNAVAILABLE: 'store_unavailable',
};

/** The event of one handled request (`answer` undefined: its work threw). */
function stepEvent(
  req: RtRequest,
  seen: Seen,
  answer: Answer | undefined,
  late: boolean,
  at: number,
  ms: number,
): StepEvent {
  const status = answer?.status ?? 500;
  const code = answer && answer.status !== 200 ? answer.code : answer ? undefined : 'INTERNAL';
  let outcome: RequestOutcome;
  if (status === 200) outcome = seen.replayed ? 'replay' : 'ok';
  else outcome = OUTCOMES[code!] ?? (status === 404 || status === 409 ? 'rejected' : 'error');
  const ended = seen.ended === true;
  const errors = seen.errors ?? [];
  return {
    callid: req.callid,
    ...(seen.flow ? { flow: seen.flow.name, version: seen.flow.version } : {}),
    outcome,
    status,
    ...(code !== undefined ? { code } : {}),
    late,
    at,
    ms,
    request: {
      command: req.command,
      result: seen.maskedResult ? MASK : req.command_result,
      error: req.command_error,
      callStatus: req.call_status,
      commandId: req.command_id,
    },
    ...(seen.prior ? { from: seen.prior.step } : {}),
    ...(seen.step !== undefined ? { step: seen.step } : {}),
    ...(seen.reply ? { reply: seen.reply } : {}),
    isNew: seen.isNew === true,
    ended,
    ...(ended ? { callOutcome: callOutcomeOf(seen.prior?.done === true, errors) } : {}),
    ...(seen.summary ? { summary: seen.summary } : {}),
    transitions: seen.transitions ?? [],
    effects: seen.effects ?? [],
    errors,
  };
}

/**
 * An effect as recordings keep it: an http lookup's request may hold secrets, so only its method and URL path, secrets
 * masked.
 */
function recordable(
  e: Effect,
  names: readonly string[] | undefined,
  secret: ((n: string) => string | undefined) | undefined,
): Effect {
  if (e.kind !== 'http') return e;
  const values = (names ?? []).map((n) => secret?.(n)).filter((v): v is string => v !== undefined && v !== '');
  const hide = (s: string) => {
    for (const v of values) s = s.split(v).join(MASK).split(encodeURIComponent(v)).join(MASK);
    return s;
  };
  const p = e.params;
  const headers = Object.fromEntries(
    Object.entries((p.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, hide(v)]),
  );
  const params: Record<string, unknown> = { method: p.method, url: hide(String(p.url ?? '')), headers };
  if (typeof p.body === 'string') params.body = hide(p.body);
  return { ...e, params };
}

function logSummary(log: CallLogger, s: CallSummary): void {
  log.info(
    {
      callid: s.callid,
      flow: s.flow,
      version: s.version,
      status: s.status,
      commands: s.commands,
      durationMs: s.durationMs,
      lastStep: s.lastStep,
      vars: s.vars,
    },
    'call ended',
  );
}

export function encodeState(s: CallState): string {
  return JSON.stringify(s);
}

export function decodeState(raw: string): CallState | undefined {
  try {
    const s = JSON.parse(raw) as CallState;
    return s && s.v === 2 && typeof s.flow === 'string' && typeof s.s === 'string' && typeof s.commandId === 'number'
      ? s
      : undefined;
  } catch {
    return undefined;
  }
}

function hangupReply(req: RtRequest): string {
  return serializeReply({
    command: 'hangup',
    command_id: req.command_id + 1,
    params: {},
    variablesRaw: req.variablesRaw,
  });
}

/**
 * What a late step answers: a short command echoing the request's command_id, so that
 * the request that follows it is taken as a retry and gets the step's stored reply.
 */
function fallbackReply(req: RtRequest, media: string | undefined): string {
  return media === undefined
    ? serializeReply({
        command: 'wait',
        command_id: req.command_id,
        params: { wait: 1 },
        variablesRaw: req.variablesRaw,
      })
    : serializeReply({
        command: 'play',
        command_id: req.command_id,
        params: { media_id: media },
        variablesRaw: req.variablesRaw,
      });
}

/** Time a fallback answer waits for its note to reach the store, at most. */
const ASIDE_WAIT_MS = 200;

/** Returned by an attempt whose compare-and-set lost: load and try again. */
const RETRY: Answer = { status: 500, code: 'RETRY', message: 'retry' };
/** Returned while another instance's claim holds the call: load again after a pause. */
const WAIT: Answer = { status: 500, code: 'WAIT', message: 'wait' };

/** A step of another instance in progress on this call (it performs an effect). */
interface Claim {
  /** The request it answers: command_id:command:call_status. */
  req: string;
  /** Epoch ms after which the claim is void (its instance died or stalled). */
  until: number;
}

/** The request a deadline fallback replaced, noted with the call (the store's aside). */
interface Replaced extends Pick<
  RtRequest,
  'command' | 'command_id' | 'command_result' | 'command_error' | 'call_status'
> {
  /** The fallback's command (wait, or play for a configured fallback media). */
  fb: string;
  /** 1: command_result is sealed (src/engine/seal.ts). */
  x?: 1;
}

/**
 * The request part of an aside; its result sealed when a key is configured (it may be a sensitive input, and the aside
 * goes to the store).
 */
function requestPart(r: RtRequest, sealer: Sealer | undefined): Omit<Replaced, 'fb'> {
  const sealed = sealer !== undefined && r.command_result !== '';
  return {
    command: r.command,
    command_id: r.command_id,
    command_result: sealed ? sealer.seal(r.command_result, r.callid) : r.command_result,
    command_error: r.command_error,
    call_status: r.call_status,
    ...(sealed ? { x: 1 as const } : {}),
  };
}

/**
 * The request to step: when the call's last answer was a fallback and this request reports
 * that fallback done (its command, the same command_id, no error), the request the
 * fallback replaced, with this request's variables; else this request.
 */
function substitute(req: RtRequest, aside: string, sealer: Sealer | undefined): RtRequest {
  let r: Replaced;
  try {
    r = JSON.parse(aside) as Replaced;
  } catch {
    return req;
  }
  if (req.command !== r.fb || req.command_id !== r.command_id || req.command_error !== '') return req;
  if (r.x === 1) {
    const result = sealer?.open(r.command_result, req.callid);
    // not opened (the key changed meanwhile): the fallback's own result goes on instead
    if (result === undefined) return req;
    r.command_result = result;
  }
  return {
    ...req,
    command: r.command,
    command_id: r.command_id,
    command_result: r.command_result,
    command_error: r.command_error,
    call_status: r.call_status,
  };
}

function claimOf(raw: string): Claim | undefined {
  if (!raw.includes('"claim":')) return undefined;
  try {
    const c = (JSON.parse(raw) as { claim?: Claim }).claim;
    return c && typeof c.until === 'number' ? c : undefined;
  } catch {
    return undefined;
  }
}

/** The call's record with a claim: its state unchanged, or, for a new call, the claim alone. */
function withClaim(prior: CallState | undefined, claim: Claim): string {
  return JSON.stringify(prior ? { ...prior, claim } : { v: 2, claim });
}

function isStoreUnavailable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'STORE_UNAVAILABLE';
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
