/**
 * One attempt at a request's step, from the call's record as loaded, as named stages:
 *
 *   open record (tombstone, claims, sealing) -> resolve flow (route, version, limits)
 *   -> advance (xstate) -> run effects (claimed first) -> write record -> commit (CAS)
 *
 * An attempt that loses the compare-and-set to another instance (`retry`), or finds another
 * instance's claim on the call (`wait`), is tried again from a fresh load; `done` carries
 * the request's StepOutcome, which the report is built from (src/engine/report.ts).
 */
import { advance, replyCommand } from './advance.js';
import { answered, hangupAnswer, type StepAnswer } from './answer.js';
import {
  claimRecord,
  countMemo,
  encodeRecord,
  memoOf,
  readRecord,
  type CallRecord,
  type RecordSeal,
} from './call-record.js';
import type { CompiledFlow } from './compile.js';
import { runEffects, type EffectDone, type EffectMemo, type Ran, type Settled } from './effects.js';
import { substitute, unnotedReport } from './fallback.js';
import { commitTo, isPromise, loadFrom, type Maybe } from './maybe.js';
import type { EngineOptions, Outcome } from './outcome.js';
import { outboundVars } from './outbound.js';
import type { CallDeps, CallLogger, CallOptions } from './ports.js';
import type { StepOutcome } from './report.js';
import type { FlowResolver, Resolved } from './resolve.js';
import type { CallState } from './types.js';
import type { Value } from '../flow/model.js';
import { isTerminal } from '../protocol/request.js';
import type { RtRequest } from '../protocol/rt.js';

/** Time kept back from the deadline for saving the state and answering. */
const EFFECT_MARGIN_MS = 250;
/** How often a request waiting for another instance's claim on its call reads the call again. */
const CLAIM_POLL_MS = 20;
/** A claim outlives the deadline by this much: an effect answered just in time still commits. */
export const CLAIM_SLACK_MS = 1000;
/** Compare-and-set attempts of one request before it gives up (never reached but by a bug). */
export const MAX_ATTEMPTS = 50;

/** One request, across its attempts. */
export interface RequestRun {
  readonly req: RtRequest;
  /** The request stepped: `req`, or the request a deadline fallback replaced (src/engine/fallback.ts). */
  stepped: RtRequest;
  /** A deadline fallback was answered in its place. */
  late: boolean;
  /**
   * Epoch ms this request began waiting for another instance: for its claim on the call, or for the note of its
   * fallback (bounded; the aside is kept meanwhile).
   */
  waitingSince?: number;
  /** The start vars of an outbound call, read once (null: none). */
  vars?: Record<string, Value> | null;
  /**
   * The call as the last attempt resolved it, with the effects it performed and the transitions it took: what the
   * report of a failure after them says (an SMS sent before the store failed was sent).
   */
  call?: {
    flow: CompiledFlow;
    prior?: CallState;
    isNew: boolean;
    effects: readonly EffectDone[];
    transitions: string[];
  };
  /** An attempt counted the call live as a new call: unless a state is kept, it ends here (a lost race included). */
  madeLive?: true;
}

/** What one attempt came to: done, or try again (the record changed; another instance's claim holds, or a note). */
type Attempt = { kind: 'done'; outcome: StepOutcome } | { kind: 'retry' } | { kind: 'wait' };
const RETRY: Attempt = { kind: 'retry' };
/** Try again after CLAIM_POLL_MS. */
const WAIT: Attempt = { kind: 'wait' };
/** No effect performed (shared: never written to). */
const NO_EFFECTS: readonly EffectDone[] = Object.freeze([]);

/** A call's record as the store keeps it: its value and revision. */
type StoredCall = { value: string; rev: number };

/** The call as an attempt resolved it (RequestRun's `call`). */
type ResolvedCall = NonNullable<RequestRun['call']>;

/** What the stages of an attempt are given by the call handler. */
export interface AttemptEnv {
  readonly deps: CallDeps;
  readonly opts: CallOptions;
  readonly now: () => number;
  readonly seal: RecordSeal;
  readonly resolver: FlowResolver;
  /** The call is over: its record becomes the tombstone (false: the record changed meanwhile). */
  bury(callid: string, rev: number | undefined): Maybe<boolean>;
  /** The call is over here (the live-call bookkeeping). */
  ended(callid: string): void;
}

/**
 * The attempts of a request. Each stage answers at once where it waits for nothing (./maybe.ts): with a store that
 * answers at once and a step that performs no effect, a request is one synchronous pass, its outcome returned as a
 * value; at the first stage that waits, the attempt goes on from that stage's promise.
 */
export class Attempts {
  constructor(private readonly env: AttemptEnv) {}

  /** Attempts the request's step until one is done: at once when no attempt had to wait, else its promise. */
  run(run: RequestRun, flowName: string | undefined, log: CallLogger, started: number): Maybe<StepOutcome> {
    const stored = this.load(run);
    const first = isPromise(stored)
      ? stored.then((s) => this.attempt(run, s, flowName, log, started))
      : this.attempt(run, stored, flowName, log, started);
    if (!isPromise(first) && first.kind === 'done') return first.outcome;
    return this.again(run, first, flowName, log, started);
  }

  /** The attempts after the first, until one is done. */
  private async again(
    run: RequestRun,
    first: Maybe<Attempt>,
    flowName: string | undefined,
    log: CallLogger,
    started: number,
  ): Promise<StepOutcome> {
    let a = await first;
    for (let n = 1; a.kind !== 'done';) {
      // waiting for another instance's claim is not a failed attempt (the wait is bounded in `open`)
      if (a.kind === 'retry' && ++n > MAX_ATTEMPTS)
        throw new Error(`call ${run.req.callid}: ${MAX_ATTEMPTS} compare-and-set attempts failed`);
      if (a.kind === 'wait') await sleep(CLAIM_POLL_MS);
      a = await this.attempt(run, await this.load(run), flowName, log, started);
    }
    return a.outcome;
  }

  /** The call's record as stored; its aside taken (the request a fallback replaced: the one stepped). */
  private load(run: RequestRun): Maybe<StoredCall | undefined> {
    // while waiting for another instance's claim, the aside stays: the note of this request's own fallback
    const loaded = loadFrom(this.env.deps.store, run.req.callid, run.waitingSince !== undefined);
    return isPromise(loaded) ? loaded.then((l) => this.took(run, l)) : this.took(run, loaded);
  }

  private took(run: RequestRun, loaded: { call?: StoredCall; aside?: string }): StoredCall | undefined {
    if (loaded.aside !== undefined && run.stepped === run.req)
      run.stepped = substitute(run.req, loaded.aside, this.env.opts.sealer);
    return loaded.call;
  }

  /**
   * One attempt from the call's record as loaded: `retry` when the record changed meanwhile
   * (another instance committed), `wait` while another instance's claim holds the call.
   */
  private attempt(
    run: RequestRun,
    stored: StoredCall | undefined,
    flowName: string | undefined,
    log: CallLogger,
    started: number,
  ): Maybe<Attempt> {
    const req = run.stepped;
    const rev = stored?.rev;
    const opened = this.open(run, readRecord(stored?.value), log);
    // a state has its version (`v`), an attempt's answer has none
    if (opened !== undefined && !('v' in opened)) return opened;
    const prior = opened;
    if (prior && this.awaitsNote(run, prior, started)) return WAIT;
    const resolved = this.env.resolver.resolve(req, prior, flowName, log);
    return isPromise(resolved)
      ? resolved.then((r) => this.resolved(run, r, prior, rev, log, started))
      : this.resolved(run, resolved, prior, rev, log, started);
  }

  /** The flow resolved: its answer instead (a tombstone written first if it says so), or the step. */
  private resolved(
    run: RequestRun,
    resolved: Resolved,
    prior: CallState | undefined,
    rev: number | undefined,
    log: CallLogger,
    started: number,
  ): Maybe<Attempt> {
    const req = run.stepped;
    if (resolved.kind === 'answer') {
      if (!resolved.bury) return this.done(run, resolved.answer);
      const buried = this.env.bury(req.callid, rev);
      return isPromise(buried)
        ? buried.then((b) => (b ? this.done(run, resolved.answer) : RETRY))
        : buried
          ? this.done(run, resolved.answer)
          : RETRY;
    }
    const call: ResolvedCall = { flow: resolved.flow, isNew: resolved.isNew, effects: NO_EFFECTS, transitions: [] };
    if (prior) call.prior = prior;
    run.call = call;
    if (resolved.isNew) run.madeLive = true;
    // an outbound call placed by the server: its vars, once per request (a retried attempt reuses them)
    if (!prior && req.request_hash && this.env.deps.outbound && run.vars === undefined)
      return outboundVars(this.env.deps.outbound, req, resolved.flow, log).then((vars) => {
        run.vars = vars;
        return this.step(run, call, rev, started);
      });
    return this.step(run, call, rev, started);
  }

  /** The engine's step; its effects, claimed first; the record written. */
  private step(run: RequestRun, call: ResolvedCall, rev: number | undefined, started: number): Maybe<Attempt> {
    const req = run.stepped;
    const { flow, prior, transitions } = call;
    const now = this.env.now();
    const outcome = advance(flow, prior, req, this.engineOptions(now, run.vars, transitions));
    if (outcome.kind !== 'effect') {
      const answer = this.write(req, flow, rev, outcome, countMemo(prior));
      return isPromise(answer)
        ? answer.then((a) => this.finish(run, call, a, outcome, now))
        : this.finish(run, call, answer, outcome, now);
    }
    const memo = memoOf(prior);
    return this.perform(run, flow, prior, rev, outcome, memo, { started, now }).then((ran) => {
      if (ran.kind === 'retry') return RETRY;
      call.effects = ran.ran.effects;
      // a lookup's record is kept by the request whose lookup left it running; with no lookup now, it is over
      if (!ran.ran.effects.some((d) => d.effect.kind === 'http')) delete memo.lk;
      const settled = ran.ran.outcome;
      return Promise.resolve(this.write(req, flow, ran.rev, settled, memo)).then((a) =>
        this.finish(run, call, a, settled, now),
      );
    });
  }

  /** The attempt's outcome, once the record is written (undefined: the record changed meanwhile: try again). */
  private finish(
    run: RequestRun,
    call: ResolvedCall,
    answer: StepAnswer | undefined,
    settled: Settled,
    now: number,
  ): Attempt {
    if (answer === undefined) return RETRY;
    const { flow, isNew, effects, transitions } = call;
    const done: StepOutcome = { answer, req: run.stepped, flow, isNew, settled, effects, transitions, now };
    if (call.prior) done.prior = call.prior;
    if (run.vars) done.vars = run.vars;
    return { kind: 'done', outcome: done };
  }

  /** Opens the record: a tombstone answered, a claim waited for (`wait`), sealed values opened (the call's state). */
  private open(run: RequestRun, record: CallRecord, log: CallLogger): Attempt | CallState | undefined {
    const req = run.stepped;
    switch (record.kind) {
      case 'none':
        return undefined;
      case 'ended':
        // ended elsewhere (another instance, the admin API): no longer live here either
        this.env.ended(req.callid);
        if (!isTerminal(req.call_status))
          log.warn(
            { callid: req.callid, code: 'CALL_ENDED', command: req.command, command_id: req.command_id },
            'request for a call that has ended: answered hangup',
          );
        return this.done(run, hangupAnswer(req));
      case 'unreadable':
        log.error({ callid: req.callid }, 'unreadable call snapshot: treated as unknown call');
        return undefined;
      case 'claimed': {
        const now = this.env.now();
        run.waitingSince ??= now;
        // another instance performs this call's effects: wait for it (it commits, or its claim expires)
        if (record.claim.until > now && now - run.waitingSince < this.env.opts.deadlineMs + CLAIM_SLACK_MS) return WAIT;
        log.warn(
          { callid: req.callid, code: 'CLAIM_EXPIRED', request: record.claim.req },
          "another instance's step on this call did not finish in time (was it killed?): taking the call over",
        );
        if (!record.state) return undefined;
        return this.opened(record.state, req.callid, log);
      }
      case 'live':
        return this.opened(record.state, req.callid, log);
    }
  }

  /**
   * The report of a fallback another instance answered, whose note the store does not have yet (unnotedReport in
   * src/engine/fallback.ts): it is waited for (`wait`: the call read again), while the request has time to answer;
   * then it goes on (stale).
   */
  private awaitsNote(run: RequestRun, prior: CallState, started: number): boolean {
    const { req } = run;
    // a report answers the call's latest command: any other request is none (checked first: it is every request)
    if (req.command_id !== prior.commandId || run.stepped !== req || isTerminal(req.call_status)) return false;
    const latest = { id: prior.commandId, command: replyCommand(prior.reply) };
    if (!unnotedReport(req, latest, this.env.opts.fallback)) return false;
    const now = this.env.now();
    if (now - started >= this.env.opts.deadlineMs - EFFECT_MARGIN_MS) return false;
    run.waitingSince ??= now;
    return true;
  }

  /** The stored state as the engine reads it: sealed values opened (else *** and an error line). */
  private opened(state: CallState, callid: string, log: CallLogger): CallState {
    if (state.x === undefined) return state;
    const opened = this.env.seal.open(state, callid);
    if (opened.problem)
      log.error(
        { callid, code: 'SENSITIVE_UNREADABLE' },
        `call ${callid}: ${opened.problem}; they read *** from now on`,
      );
    return opened.state;
  }

  /**
   * Runs the step's effects, with the executor given, within the time left before the
   * deadline. No other instance may perform them meanwhile: the call is claimed first.
   */
  private async perform(
    run: RequestRun,
    flow: CompiledFlow,
    prior: CallState | undefined,
    rev: number | undefined,
    outcome: Outcome,
    memo: EffectMemo,
    time: { started: number; now: number },
  ): Promise<{ kind: 'ran'; ran: Ran; rev: number | undefined } | { kind: 'retry' }> {
    const req = run.stepped;
    const claimedAt = this.env.now();
    const claim = {
      req: `${req.command_id}:${req.command}:${req.call_status}`,
      until: claimedAt + this.env.opts.deadlineMs + CLAIM_SLACK_MS,
    };
    const stored = prior && this.env.seal.seal(flow, prior, req.callid);
    const record = claimRecord(stored, claim);
    const claimed = await commitTo(this.env.deps.store, req.callid, rev, record, this.env.opts.callTtlMs);
    if (claimed === undefined) return { kind: 'retry' };
    // the time runs from the request's start; from its own claim when the request got there late: it waited for
    // another instance (its claim, past its own deadline; its fallback's note), or for a store slow to answer (over
    // half the deadline gone). Its effects are not cut short for that wait: past the deadline, the fallback answers.
    const waited = run.waitingSince !== undefined || claimedAt - time.started > this.env.opts.deadlineMs / 2;
    const from = waited ? claimedAt : time.started;
    const budgetMs = () => this.env.opts.deadlineMs - (this.env.now() - from) - EFFECT_MARGIN_MS;
    const ran = await runEffects(outcome, this.env.deps.executor, { memo, budgetMs, now: time.now });
    return { kind: 'ran', ran, rev: claimed };
  }

  /** Writes what the engine answered: the new record (or the tombstone), committed; undefined when it lost the race. */
  private write(
    req: RtRequest,
    flow: CompiledFlow,
    rev: number | undefined,
    s: Settled,
    memo: EffectMemo,
  ): Maybe<StepAnswer | undefined> {
    switch (s.kind) {
      case 'replay':
        return answered(s.replyJson);
      case 'stale':
        return { kind: 'stale', code: 'STALE_REQUEST', message: s.message };
      case 'rejected':
        return { kind: s.code === 'UNKNOWN_CALL' ? 'not_found' : 'failed', code: s.code, message: s.message };
      case 'reply':
        break;
    }
    const state = s.state;
    if (!state) {
      const buried = this.env.bury(req.callid, rev);
      return isPromise(buried)
        ? buried.then((b) => (b ? answered(s.replyJson) : undefined))
        : buried
          ? answered(s.replyJson)
          : undefined;
    }
    const sealed = this.env.seal.seal(flow, state, req.callid);
    const record = encodeRecord(sealed, sealed === state ? s.stateJson : undefined, memo);
    const committed = commitTo(this.env.deps.store, req.callid, rev, record, this.env.opts.callTtlMs);
    return isPromise(committed)
      ? committed.then((c) => this.committed(req.callid, state, c, s.replyJson))
      : this.committed(req.callid, state, committed, s.replyJson);
  }

  /** The record committed at `rev` (undefined: it lost the race): the call live here, its reply answered. */
  private committed(callid: string, state: CallState, rev: number | undefined, replyJson: string) {
    if (rev === undefined) return undefined;
    this.env.deps.live.set(callid, state.flow, state.version, state.step, rev);
    return answered(replyJson);
  }

  private engineOptions(now: number, vars: RequestRun['vars'], transitions: string[]): EngineOptions {
    const o = this.env.opts;
    const e: EngineOptions = { now, unknownCall: o.unknownCall };
    if (vars) e.vars = vars;
    if (o.maxStateBytes !== undefined) e.maxStateBytes = o.maxStateBytes;
    if (o.evalLimits) e.evalLimits = o.evalLimits;
    if (o.secret) e.secret = o.secret;
    if (o.observer?.transitions) e.hooks = { took: (k: string) => void transitions.push(k) };
    return e;
  }

  private done(run: RequestRun, answer: StepAnswer): Attempt {
    return { kind: 'done', outcome: outcomeOf(run, answer, this.env.now()) };
  }
}

/** The outcome of a request that did not reach the engine (or failed): what is known of its call. */
export function outcomeOf(run: RequestRun, answer: StepAnswer, now: number): StepOutcome {
  const o: StepOutcome = { answer, req: run.stepped, isNew: false, effects: [], transitions: [], now };
  if (run.call) Object.assign(o, run.call);
  return o;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
