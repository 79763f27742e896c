/**
 * The campaign's scheduler: takes the CSV's rows in order and calls each through a Dialer,
 * at most `rate` calls placed per second (./bucket.ts) and `concurrency` calls at once
 * (placed and not over), tries again a call not answered (NOANSWER, BUSY, CONGESTION,
 * REJECTED, or never connected) or not placed for a passing reason, after `retryDelayMs`,
 * up to `retries` more times, and records everything in the Journal (./journal.ts) as it
 * happens.
 *
 * Stopping (the `stop` signal, SIGINT): no call is placed any more; the calls in progress
 * are followed to their end for `stopWaitMs` at most (or until `halt`, a second SIGINT),
 * then abandoned: their ids stay in the state, and a resumed campaign follows them again
 * rather than calling their numbers twice.
 *
 * Time comes from the Clock only (tests drive a fake one); rows come from an async iterator
 * read one at a time, so the CSV is never held in memory.
 */
import { TokenBucket } from './bucket.js';
import type { Clock } from './clock.js';
import type { Journal, StateRow } from './journal.js';
import { PlaceError, RETRIED_STATUSES, type CallView, type CampaignEvent, type CampaignRow, type Dialer, type RowRead, type RowResult } from './types.js';

export interface SchedulerOptions {
  dialer: Dialer;
  journal: Journal;
  /** The rows not known to the journal yet, in order. */
  rows: AsyncIterator<RowRead>;
  clock: Clock;
  /** Calls placed per second, at most. */
  rate: number;
  /** Calls in progress at once, at most. */
  concurrency: number;
  /** Attempts after the first, at most. */
  retries: number;
  retryDelayMs: number;
  /** After stop: how long the calls in progress are still followed. */
  stopWaitMs: number;
  stop?: AbortSignal;
  halt?: AbortSignal;
  onEvent?: (e: CampaignEvent) => void;
  /** Rows started but without a line in the results yet, at most (a row waiting for its retry holds back those after it). */
  windowMax?: number;
  /** Place errors in a row (transient ones, no call placed between them) that stop the campaign. */
  maxConsecutiveErrors?: number;
}

export interface CampaignOutcome {
  /** finished: every row has its result; stopped: by the stop signal; failed: see message. */
  status: 'finished' | 'stopped' | 'failed';
  message?: string;
}

export const WINDOW_MAX = 10_000;
export const MAX_CONSECUTIVE_ERRORS = 5;

/** Wakes the scheduler's loop: a call ended, a stop, an error. A wake with no one waiting is kept for the next wait. */
class Waker {
  private resolve: (() => void) | undefined;
  private promise: Promise<void> | undefined;
  private pending = false;

  wait(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    this.promise ??= new Promise((r) => (this.resolve = r));
    return this.promise;
  }

  wake(): void {
    const r = this.resolve;
    if (!r) {
      this.pending = true;
      return;
    }
    this.resolve = undefined;
    this.promise = undefined;
    r();
  }
}

export async function runCampaign(o: SchedulerOptions): Promise<CampaignOutcome> {
  const { journal, clock, dialer } = o;
  const windowMax = o.windowMax ?? WINDOW_MAX;
  const maxErrors = o.maxConsecutiveErrors ?? MAX_CONSECUTIVE_ERRORS;
  const emit = (e: CampaignEvent) => o.onEvent?.(e);
  const bucket = new TokenBucket(o.rate);
  const waker = new Waker();
  const halt = new AbortController();
  const onStop = () => waker.wake();
  const onHalt = () => halt.abort(o.halt?.reason);
  o.stop?.addEventListener('abort', onStop);
  o.halt?.addEventListener('abort', onHalt);
  journal.onError = () => waker.wake();
  const inFlight = new Set<Promise<void>>();
  /** Rows waiting for their retry, by retryAt then index. */
  const waiting: StateRow[] = [];
  let lookahead: CampaignRow | undefined;
  let exhausted = false;
  let consecutiveErrors = 0;
  let fatal: string | undefined;

  const stopped = () => o.stop?.aborted === true;

  const queueRetry = (r: StateRow) => {
    waiting.push(r);
    waiting.sort((a, b) => a.retryAt! - b.retryAt! || a.index - b.index);
  };

  /** A row's last attempt ended: done, or tried again later. */
  const settle = (r: StateRow, result: RowResult, retry: string | undefined) => {
    if (retry !== undefined && r.attempts <= o.retries) {
      const at = clock.now() + o.retryDelayMs;
      journal.waiting(r, at, result);
      queueRetry(r);
      emit({ type: 'retry', line: r.line, number: r.number, attempt: r.attempts, why: retry, at });
      return;
    }
    journal.done(r, result);
    emit({ type: 'result', result });
  };

  const attempt = async (r: StateRow, resumeId?: string): Promise<void> => {
    let id = resumeId;
    if (id === undefined) {
      try {
        id = await dialer.place(r, halt.signal);
      } catch (e) {
        if (halt.signal.aborted) return; // stays `placing`: a resumed campaign cannot know whether it was placed
        const err = e instanceof PlaceError ? e : new PlaceError('transient', (e as Error).message ?? String(e));
        if (err.kind === 'fatal') {
          fatal ??= err.message;
          // not called: the resumed campaign tries it again, as this attempt
          r.attempts--;
          journal.waiting(r, clock.now(), result(r, 'failed', { detail: err.message }));
          return;
        }
        if (err.kind === 'transient' || err.kind === 'unknown') {
          consecutiveErrors++;
          if (consecutiveErrors >= maxErrors) fatal ??= `${consecutiveErrors} calls in a row could not be placed; the last: ${err.message}`;
          emit({ type: 'warning', message: `line ${r.line} ${r.number}: ${err.kind === 'unknown' ? 'perhaps not placed' : 'not placed'}: ${err.message}` });
        }
        if (err.kind === 'unknown') {
          settle(r, result(r, 'unknown', { detail: `${err.message}: the call may have been placed, so it is not tried again` }), undefined);
          return;
        }
        settle(r, result(r, 'failed', { detail: err.message }), err.kind === 'transient' ? 'not placed' : undefined);
        return;
      }
      consecutiveErrors = 0;
      journal.placed(r, id);
      emit({ type: 'placed', line: r.line, number: r.number, attempt: r.attempts, id });
    }
    let view: CallView;
    try {
      view = await dialer.follow(id, halt.signal);
    } catch (e) {
      if (halt.signal.aborted) return; // stays `calling`: followed again on a resume
      settle(r, result(r, 'unknown', { detail: `lost track of the call ${id}: ${(e as Error).message ?? String(e)}` }), undefined);
      return;
    }
    const [res, retry] = judge(r, view);
    settle(r, res, retry);
  };

  const start = (r: StateRow, resumeId?: string) => {
    const p = attempt(r, resumeId).finally(() => {
      inFlight.delete(p);
      waker.wake();
    });
    inFlight.add(p);
  };

  /** Sleeps until `ms` passed or something woke the loop. */
  const nap = async (ms: number) => {
    const ac = new AbortController();
    try {
      await Promise.race([clock.sleep(ms, ac.signal), waker.wait()]);
    } finally {
      ac.abort();
    }
  };

  // What a previous run left: calls followed again, retries queued, rows whose placing was cut off
  for (const r of [...journal.rows.values()]) {
    if (r.phase === 'calling') start(r, r.id);
    else if (r.phase === 'waiting') {
      if (r.attempts > o.retries && r.last) {
        journal.done(r, { ...r.last, attempts: r.attempts });
        emit({ type: 'result', result: { ...r.last, attempts: r.attempts } });
      } else queueRetry(r);
    } else if (r.phase === 'placing') {
      const res = result(r, 'unknown', { detail: 'the campaign stopped while placing this call: it may have been placed, so it is not called again' });
      journal.done(r, res);
      emit({ type: 'result', result: res });
    }
  }

  try {
    for (;;) {
      if (stopped() || fatal !== undefined || journal.error) break;
      if (inFlight.size >= o.concurrency) {
        await waker.wait();
        continue;
      }
      const now = clock.now();
      let job: StateRow | CampaignRow | undefined = waiting[0] !== undefined && waiting[0].retryAt! <= now ? waiting[0] : undefined;
      if (!job && !lookahead && !exhausted && journal.window < windowMax) {
        const next = await (clock.io ? clock.io(o.rows.next()) : o.rows.next());
        if (next.done) exhausted = true;
        else if (next.value.kind === 'invalid') {
          const v = next.value;
          const res: RowResult = { number: v.number, outcome: 'invalid', callStatus: '', lastStep: '', durationMs: null, attempts: 0, callid: '', line: v.line, detail: v.reason };
          journal.invalid(v.index, v.line, res);
          emit({ type: 'invalid', line: v.line, number: v.number, reason: v.reason });
          emit({ type: 'result', result: res });
        } else lookahead = next.value.row;
        continue;
      }
      job ??= lookahead;
      if (!job) {
        if (waiting[0] !== undefined) await nap(waiting[0].retryAt! - now);
        else if (inFlight.size > 0) await waker.wait();
        else if (exhausted) break; // every row done
        else {
          // the window is full of rows done and none before them in progress: cannot be
          fatal = `internal: ${journal.window} rows held and none in progress`;
          break;
        }
        continue;
      }
      const delay = bucket.delay(now);
      if (delay > 0) {
        await nap(delay);
        continue;
      }
      bucket.take(now);
      if (job === lookahead) lookahead = undefined;
      else waiting.shift();
      start(journal.placing(job));
    }

    // stopping (or done): the calls in progress, for stopWaitMs at most
    if (inFlight.size > 0) {
      const all = Promise.allSettled([...inFlight]);
      if (!halt.signal.aborted) {
        const ac = new AbortController();
        const halted = new Promise<void>((r) => halt.signal.addEventListener('abort', () => r(), { once: true }));
        const bound = stopped() || fatal !== undefined || journal.error ? clock.sleep(o.stopWaitMs, ac.signal).catch(() => undefined) : new Promise<void>(() => undefined);
        await Promise.race([all, halted, bound]);
        ac.abort();
      }
      if (inFlight.size > 0) {
        halt.abort(new Error('the campaign stopped'));
        await Promise.allSettled([...inFlight]);
      }
    }
    const done = !stopped() && fatal === undefined && !journal.error && exhausted && lookahead === undefined && waiting.length === 0 && journal.window === 0;
    if (done) journal.finish();
    await journal.flushed().catch(() => undefined);
    if (journal.error) return { status: 'failed', message: `could not save the campaign's state or results: ${journal.error.message}` };
    if (fatal !== undefined) return { status: 'failed', message: fatal };
    if (done) return { status: 'finished' };
    return { status: 'stopped' };
  } finally {
    o.stop?.removeEventListener('abort', onStop);
    o.halt?.removeEventListener('abort', onHalt);
    journal.onError = undefined;
  }
}

/** A finished (or given up) call: its result, and why to try again (undefined: do not). */
function judge(r: StateRow, v: CallView): [RowResult, string | undefined] {
  const callid = v.callid ?? '';
  if (v.status === 'placed') return [result(r, 'not_connected', { callid, detail: 'the service never connected the call' }), 'never connected'];
  if (v.status === 'live') return [result(r, 'timeout', { callid, lastStep: v.step ?? '', detail: 'still in progress at --timeout: no longer followed' }), undefined];
  const callStatus = v.callStatus ?? '';
  const res = result(r, v.outcome ?? 'ended', { callid, callStatus, lastStep: v.lastStep ?? '', durationMs: v.durationMs ?? null });
  return [res, RETRIED_STATUSES.has(callStatus) ? callStatus : undefined];
}

function result(r: StateRow, outcome: string, more: Partial<RowResult> = {}): RowResult {
  return { number: r.number, outcome, callStatus: '', lastStep: '', durationMs: null, attempts: r.attempts, callid: '', line: r.line, detail: '', ...more };
}
