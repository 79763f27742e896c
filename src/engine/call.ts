/**
 * The call step for one parsed real-time request, as one pass of named stages:
 *
 *   handle = deadline(queue-per-callid(attempts))
 *   attempt: load record -> open record (tombstone, claims, sealing) -> resolve flow (route,
 *            version, limits) -> advance (xstate) -> run effects -> write record -> commit (CAS)
 *   then report (the log lines, the recording, the observers' event: src/engine/report.ts)
 *
 * - Requests of one callid run one at a time in this process (src/engine/call-queue.ts).
 *   Across processes sharing a store, a step is committed with a compare-and-set on the
 *   call's revision: of two copies of one request, one advances the call and the other,
 *   finding the revision changed, loads again and answers the stored reply (same bytes). A
 *   step that performs an effect first commits a claim (src/engine/call-record.ts): other
 *   instances wait for it instead of performing it again, and take the call over if the
 *   claim expires (its instance died).
 * - Every request is answered before the deadline (src/engine/deadline.ts), with the
 *   fallback if the step is late (src/engine/fallback.ts); the late step still lands.
 * - A store slow to answer is waited for while the call can ride it (src/engine/stall.ts):
 *   the request's reply if it answers in time, else the fallback, the step applied when it does.
 * - The answer is a kind (src/engine/answer.ts); the HTTP stage maps it to a status.
 */
import { failureAnswer, type StepAnswer } from './answer.js';
import { Attempts, MAX_ATTEMPTS, outcomeOf, type RequestRun } from './attempt.js';
import { CallQueue } from './call-queue.js';
import { DEFAULT_ENDED_TTL_MS, ENDED, readRecord, RecordSeal } from './call-record.js';
import { DeadlineTimer } from './deadline.js';
import { FALLBACK_WAIT_S, fallbackNote, fallbackReply, substitute } from './fallback.js';
import type { CallDeps, CallLogger, CallOptions, Routes } from './ports.js';
import { commitTo, isPromise, type Maybe } from './maybe.js';
import type { StepObserver } from './observe.js';
import { isFailure, StepReport, type Handling, type StepOutcome } from './report.js';
import { FlowResolver } from './resolve.js';
import { StallGuard } from './stall.js';
import type { CallState } from './types.js';
import type { RtRequest } from '../protocol/rt.js';

/** Time a fallback answer waits for its note to reach the store, at most. */
const ASIDE_WAIT_MS = 200;

export class CallHandler {
  private readonly now: () => number;
  private readonly queue = new CallQueue();
  private readonly deadline: DeadlineTimer;
  private readonly resolver: FlowResolver;
  private readonly attempts: Attempts;
  private readonly report: StepReport;
  private readonly stall: StallGuard;
  private readonly deps: CallDeps;
  /** The note of each call's last fallback, while the step it answered for runs here. */
  private readonly notes = new Map<string, string>();

  constructor(
    deps: CallDeps,
    private readonly opts: CallOptions,
  ) {
    // the store is waited for as long as the request's fallback covers: its deadline, the fallback's wait, and the
    // deadline of the fallback's report
    this.stall = new StallGuard(2 * opts.deadlineMs + FALLBACK_WAIT_S * 1000);
    this.deps = deps.storeInProcess ? deps : { ...deps, store: this.stall.wrap(deps.store) };
    this.now = deps.now ?? Date.now;
    this.deadline = new DeadlineTimer(opts.deadlineMs);
    this.resolver = new FlowResolver(deps.versions, deps.live, opts.routes, opts.maxLiveCalls);
    this.attempts = new Attempts({
      deps: this.deps,
      opts,
      now: this.now,
      seal: new RecordSeal(opts.sealer),
      resolver: this.resolver,
      bury: (callid, rev) => this.bury(callid, rev),
      ended: (callid) => this.ended(callid),
    });
    this.report = new StepReport({
      ...(opts.recorder ? { recorder: opts.recorder } : {}),
      ...(opts.secret ? { secret: opts.secret } : {}),
    });
  }

  /**
   * Answers one request before the deadline (the fallback if its step is late; the step still lands). A request whose
   * step waits for nothing (a store that answers at once, no effect: src/engine/maybe.ts) and whose call has no request
   * running here is stepped, reported and answered in this call, with no queue and no deadline: its answer is returned
   * as is, not in a promise.
   */
  handle(req: RtRequest, flowName: string | undefined, log: CallLogger, traceId?: string): Maybe<StepAnswer> {
    const run: RequestRun = { req, stepped: req, late: false };
    const observer = this.opts.observer;
    const at = observer ? this.now() : 0;
    const t0 = observer ? performance.now() : 0;
    const last = this.queue.last(req.callid);
    let work: Maybe<StepOutcome>;
    if (last) {
      const start = () => this.step(run, flowName, log, this.now());
      work = last.then(start, start);
    } else {
      try {
        work = this.step(run, flowName, log, this.now());
      } catch (err) {
        work = Promise.reject(err);
      }
    }
    if (isPromise(work)) return this.later(run, work, log, at, t0, traceId);
    if (observer) this.tell(observer, run, work, log, at, t0, traceId);
    return work.answer;
  }

  /**
   * A request whose step waits: queued before its call's next request, answered by the deadline at the latest, with one
   * continuation on its work (the queue left, the observers told, the answer given unless the fallback was).
   */
  private later(
    run: RequestRun,
    work: Promise<StepOutcome>,
    log: CallLogger,
    at: number,
    t0: number,
    traceId: string | undefined,
  ): Promise<StepAnswer> {
    const { callid } = run.req;
    this.queue.enter(callid, work);
    return new Promise<StepAnswer>((resolve) => {
      const deadline = this.deadline.start(() => void this.fallback(run, log, work).then(resolve));
      const observer = this.opts.observer;
      work.then(
        (o) => {
          this.queue.leave(callid, work);
          if (observer) this.tell(observer, run, o, log, at, t0, traceId);
          if (this.deadline.done(deadline)) resolve(o.answer);
        },
        (err: unknown) => {
          this.queue.leave(callid, work);
          if (observer) this.tell(observer, run, undefined, log, at, t0, traceId);
          if (!this.deadline.done(deadline))
            return log.error({ callid, err }, 'a late step failed: the call stays where it was');
          log.error({ callid, err }, 'the step failed: the call stays where it was');
          resolve({ kind: 'failed', code: 'INTERNAL', message: 'the step failed; the call state was not changed' });
        },
      );
    });
  }

  /** The observers' event of the request (`o` undefined: its work threw). */
  private tell(
    observer: StepObserver,
    run: RequestRun,
    o: StepOutcome | undefined,
    log: CallLogger,
    at: number,
    t0: number,
    traceId: string | undefined,
  ): void {
    const h: Handling = { late: run.late, at, ms: performance.now() - t0 };
    if (traceId !== undefined) h.traceId = traceId;
    try {
      observer.step(this.report.event(run.stepped, o, h));
    } catch (err) {
      log.error({ callid: run.req.callid, err }, 'an observer of the call step failed');
    }
  }

  /** A request of the call is running or waiting here. */
  isRunning(callid: string): boolean {
    return this.queue.has(callid);
  }

  /** New routes (a config reload); live calls are not affected. */
  setRoutes(routes: Routes): void {
    this.resolver.setRoutes(routes);
  }

  /**
   * Ends a live call from outside (the admin API): its record becomes the tombstone, by a
   * compare-and-set (retried when a request of the call committed meanwhile), so the service's
   * next request of the call is answered `hangup`. `busy`: another instance holds a claim on
   * the call; `not_live`: no state (never seen, ended, expired, or a new call's claim alone).
   */
  endCall(
    callid: string,
  ): Promise<{ kind: 'ended'; state: CallState } | { kind: 'busy'; until: number } | { kind: 'not_live' }> {
    return this.queue.run(callid, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        // the aside stays: if the call is not ended here, its next request still needs it
        const loaded = await this.deps.store.load(callid, true);
        const r = readRecord(loaded.call?.value);
        if (r.kind === 'claimed' && r.claim.until > this.now()) return { kind: 'busy' as const, until: r.claim.until };
        const state = r.kind === 'live' || r.kind === 'claimed' ? r.state : undefined;
        if (!state) return { kind: 'not_live' as const };
        if (await this.bury(callid, loaded.call!.rev)) return { kind: 'ended' as const, state };
      }
      throw new Error(`call ${callid}: ${MAX_ATTEMPTS} compare-and-set attempts failed`);
    });
  }

  /** Stops the timers (the server closes). */
  close(): void {
    this.deadline.close();
    this.stall.close();
  }

  /** The deadline passed: the fallback, once its note is with the call (or at once if the store is slow). */
  private fallback(run: RequestRun, log: CallLogger, work: Promise<unknown>): Promise<StepAnswer> {
    const { req } = run;
    run.late = true;
    log.warn(
      { callid: req.callid, code: 'DEADLINE', deadlineMs: this.opts.deadlineMs },
      'step missed the deadline: fallback answered',
    );
    // not loaded yet (queued after a late request of its call, the store slow): it may be the report of that
    // request's fallback, standing for the request that fallback replaced; its own note says so again
    const earlier = run.stepped === req ? this.notes.get(req.callid) : undefined;
    const stepped = earlier === undefined ? run.stepped : substitute(req, earlier, this.opts.sealer);
    const note = fallbackNote(stepped, this.opts.fallback, this.opts.sealer);
    this.notes.set(req.callid, note);
    const over = () => void (this.notes.get(req.callid) === note && this.notes.delete(req.callid));
    work.then(over, over);
    const noted = this.deps.store
      .setAside(req.callid, note, this.opts.callTtlMs)
      .catch((err: unknown) => log.error({ callid: req.callid, err }, 'the fallback could not be noted in the store'));
    const answer: StepAnswer = { kind: 'answered', body: fallbackReply(req, this.opts.fallback), late: true };
    return Promise.race([noted, new Promise((r) => setTimeout(r, ASIDE_WAIT_MS).unref?.())]).then(() => answer);
  }

  /** The request's step: its attempts until one is done, the live-call bookkeeping, the report; at once if it can. */
  private step(run: RequestRun, flowName: string | undefined, log: CallLogger, started: number): Maybe<StepOutcome> {
    let o: Maybe<StepOutcome>;
    try {
      o = this.attempts.run(run, flowName, log, started);
    } catch (err) {
      o = this.failure(run, err, log);
    }
    return isPromise(o)
      ? o.then(
          (x) => this.settle(run, x, log),
          (err: unknown) => this.settle(run, this.failure(run, err, log), log),
        )
      : this.settle(run, o, log);
  }

  /** A failure is an answer too: the store out of reach (the service retries), or a bug. */
  private failure(run: RequestRun, err: unknown, log: CallLogger): StepOutcome {
    const answer = failureAnswer(err);
    const outcome = outcomeOf(run, answer, this.now());
    const callid = run.req.callid;
    // late, the fallback was answered: the service will not retry this one
    if (run.late) log.error({ callid, err }, 'a late step failed: the call stays where it was');
    else if (answer.code === 'STORE_UNAVAILABLE') {
      const message = (err as Error).message;
      log.error(
        { callid, code: 'STORE_UNAVAILABLE', err: message },
        'the call store is unavailable: the service will retry',
      );
    } else log.error({ callid, err }, 'the step failed: the call stays where it was');
    return outcome;
  }

  /** The step done: its live-call bookkeeping and its report. */
  private settle(run: RequestRun, outcome: StepOutcome, log: CallLogger): StepOutcome {
    this.tally(run, outcome);
    this.report.log(outcome, log);
    return outcome;
  }

  /**
   * The live-call bookkeeping of a request done: calls started and errors per version; a call this request counted
   * live as new ends unless its state was kept (refused, failed, or another instance won the race to start it).
   */
  private tally(run: RequestRun, o: StepOutcome): void {
    const { live } = this.deps;
    const s = o.settled?.kind === 'reply' ? o.settled : undefined;
    if (o.flow) {
      const { name, version } = o.flow;
      if (s && o.isNew) live.started(name, version);
      const errored = s && (o.req.command_error !== '' || s.log?.some((l) => l.level === 'error'));
      if (errored || isFailure(o.answer.kind)) live.error(name, version);
    }
    if (run.madeLive && !(s?.state && o.answer.kind === 'answered')) this.ended(o.req.callid);
  }

  private ended(callid: string): void {
    if (this.deps.live.end(callid)) this.deps.release();
  }

  /** The call is over: its record becomes the tombstone, so a late request cannot restart it. */
  private bury(callid: string, rev: number | undefined): Maybe<boolean> {
    const ttl = this.opts.endedTtlMs ?? DEFAULT_ENDED_TTL_MS;
    const committed = commitTo(this.deps.store, callid, rev, ENDED, ttl);
    return isPromise(committed) ? committed.then((c) => this.buried(callid, c)) : this.buried(callid, committed);
  }

  private buried(callid: string, rev: number | undefined): boolean {
    if (rev === undefined) return false;
    this.ended(callid);
    return true;
  }
}
