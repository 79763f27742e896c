/**
 * The campaign's scheduler: takes the CSV's rows in order and calls each through a Dialer,
 * at most `rate` calls placed per second (./bucket.ts) and `concurrency` calls at once
 * (placed and not over), tries again a call not answered (NOANSWER, BUSY, CONGESTION,
 * REJECTED, or never connected) or not placed for a passing reason, after `retryDelayMs`,
 * up to `retries` more times, and records everything in the Journal (./journal.ts) as it
 * happens.
 *
 * Failures (./streak.ts): only a call placed (or perhaps placed) or a row refused counts as
 * one of the row's attempts. A problem of every row (`fatal`, or MAX_CONSECUTIVE_ERRORS
 * placements failing in a row) stops the campaign without spending any; while placements
 * fail, the next one is placed only when no other is in flight, so that a server down
 * costs no more rows than were already being placed.
 *
 * Stopping (the `stop` signal, SIGINT; a failure): no call is placed any more; the
 * placements in flight are waited for (until their answer or their timeout: whether each
 * call was placed is then known); the calls in progress are followed to their end for
 * `stopWaitMs` at most (or until `halt`, a second SIGINT), then abandoned: their ids stay
 * in the state, and a resumed campaign follows them again rather than calling their numbers
 * twice. `halt` aborts the placements too: one whose request had not left is tried again by
 * the next run; one sent stays `placing` (perhaps placed: `unknown`).
 *
 * Time comes from the Clock only (tests drive a fake one); rows come from an async iterator
 * read one at a time, so the CSV is never held in memory.
 */
import { TokenBucket } from './bucket.js';
import { FailureStreak } from './streak.js';
import { judge, result } from './verdict.js';
import { Waker } from './waker.js';
import type { Clock } from './clock.js';
import type { Journal, StateRow } from './journal.js';
import {
  FollowInterrupted,
  PlaceError,
  type CallView,
  type CampaignEvent,
  type CampaignRow,
  type Dialer,
  type RowRead,
  type RowResult,
} from './types.js';

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
  /**
   * Rows started but without a line in the results yet, at most (a row waiting for its retry holds back those after
   * it).
   */
  windowMax?: number;
  /** Placements failing in a row (no call placed between them) that stop the campaign. */
  maxConsecutiveErrors?: number;
}

export interface CampaignOutcome {
  /** finished: every row has its result; stopped: by the stop signal; failed: see message. */
  status: 'finished' | 'stopped' | 'failed';
  message?: string;
}

export const WINDOW_MAX = 10_000;
export const MAX_CONSECUTIVE_ERRORS = 5;

export async function runCampaign(o: SchedulerOptions): Promise<CampaignOutcome> {
  const { journal, clock, dialer } = o;
  const windowMax = o.windowMax ?? WINDOW_MAX;
  const maxErrors = o.maxConsecutiveErrors ?? MAX_CONSECUTIVE_ERRORS;
  const emit = (e: CampaignEvent) => o.onEvent?.(e);
  const bucket = new TokenBucket(o.rate);
  const waker = new Waker();
  /** Aborts the follows: a halt, or the stop's wait over. */
  const halt = new AbortController();
  /** Aborts the placements: a halt only (a placement's fate is otherwise waited for). */
  const haltPlacing = new AbortController();
  const onStop = () => waker.wake();
  const onHalt = () => {
    haltPlacing.abort(o.halt?.reason);
    halt.abort(o.halt?.reason);
  };
  o.stop?.addEventListener('abort', onStop);
  o.halt?.addEventListener('abort', onHalt);
  journal.onError = () => waker.wake();
  const inFlight = new Set<Promise<void>>();
  /** Rows waiting for their retry, by retryAt then index. */
  const waiting: StateRow[] = [];
  let lookahead: CampaignRow | undefined;
  let exhausted = false;
  const streak = new FailureStreak(maxErrors);
  /** Rows in dialer.place() now. */
  let placing = 0;
  let fatal: string | undefined;

  const stopped = () => o.stop?.aborted === true;

  const queueRetry = (r: StateRow) => {
    waiting.push(r);
    waiting.sort((a, b) => a.retryAt! - b.retryAt! || a.index - b.index);
  };

  /** A row's last attempt ended: done, or tried again later. */
  const settle = (r: StateRow, res: RowResult, retry: string | undefined) => {
    if (retry !== undefined && r.attempts <= o.retries) {
      const at = clock.now() + o.retryDelayMs;
      journal.waiting(r, at, res);
      queueRetry(r);
      emit({ type: 'retry', line: r.line, number: r.number, attempt: r.attempts, why: retry, at });
      return;
    }
    journal.done(r, res);
    emit({ type: 'result', result: res });
  };

  /** Rows held by the streak (refused on their last attempt), failed now. */
  const finish = (held: StateRow[]) => {
    for (const r of held) {
      journal.done(r, r.last!);
      emit({ type: 'result', result: r.last! });
    }
  };

  /** The campaign stops for a problem of every row: the attempts its streak of refusals took are given back. */
  const stopForAll = (message: string) => {
    fatal ??= message;
    for (const r of streak.refunds()) journal.giveBack(r);
  };

  /** A placement that failed: counted or not, tried again or not, by whose fault it was (PlaceError). */
  const failed = (r: StateRow, err: PlaceError) => {
    const now = clock.now();
    const res = result(r, 'failed', { detail: err.message });
    switch (err.kind) {
      case 'fatal':
        // not called: the resumed campaign tries it again, as this attempt
        journal.refund(r, now, res);
        stopForAll(err.message);
        return;
      case 'row':
        settle(r, res, undefined);
        return;
      case 'transient':
        emit({
          type: 'warning',
          message: `line ${r.line} ${r.number}: not placed (not counted as an attempt): ${err.message}`,
        });
        journal.refund(r, now + o.retryDelayMs, res);
        queueRetry(r);
        emit({
          type: 'retry',
          line: r.line,
          number: r.number,
          attempt: r.attempts,
          why: 'not placed',
          at: now + o.retryDelayMs,
        });
        break;
      case 'refused': {
        emit({ type: 'warning', message: `line ${r.line} ${r.number}: refused: ${err.message}` });
        const last = r.attempts > o.retries;
        if (last)
          journal.waiting(r, now, res); // held: failed once a call is placed, given back if the campaign stops first
        else settle(r, res, 'refused');
        if (streak.add(r, err.kind, last))
          stopForAll(`${streak.max} calls in a row could not be placed; the last: ${err.message}`);
        return;
      }
      case 'unknown':
        emit({ type: 'warning', message: `line ${r.line} ${r.number}: perhaps placed: ${err.message}` });
        settle(
          r,
          result(r, 'unknown', { detail: `${err.message}: the call may have been placed, so it is not tried again` }),
          undefined,
        );
        break;
    }
    if (streak.add(r, err.kind))
      stopForAll(`${streak.max} calls in a row could not be placed; the last: ${err.message}`);
  };

  const attempt = async (r: StateRow, resumeId?: string): Promise<void> => {
    let id = resumeId;
    if (id === undefined) {
      placing++;
      try {
        id = await dialer.place(r, haltPlacing.signal);
      } catch (e) {
        const err = e instanceof PlaceError ? e : new PlaceError('unknown', (e as Error).message ?? String(e));
        if (haltPlacing.signal.aborted) {
          // halted: a request that never left placed nothing (tried again next run); one sent stays `placing` (perhaps
          // placed)
          if (err.kind === 'transient' || err.kind === 'fatal')
            journal.refund(r, clock.now(), result(r, 'failed', { detail: err.message }));
          return;
        }
        failed(r, err);
        return;
      } finally {
        placing--;
        waker.wake();
      }
      finish(streak.close());
      journal.placed(r, id);
      emit({ type: 'placed', line: r.line, number: r.number, attempt: r.attempts, id });
    }
    let view: CallView;
    try {
      view = await dialer.follow(id, halt.signal);
    } catch (e) {
      if (halt.signal.aborted) return; // stays `calling`: followed again on a resume
      if (e instanceof FollowInterrupted) {
        fatal ??= `${e.message}; the calls in progress are followed again by the next run`;
        return; // stays `calling`
      }
      settle(
        r,
        result(r, 'unknown', { detail: `lost track of the call ${id}: ${(e as Error).message ?? String(e)}` }),
        undefined,
      );
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
      const res = result(r, 'unknown', {
        detail: 'the campaign stopped while placing this call: it may have been placed, so it is not called again',
      });
      journal.done(r, res);
      emit({ type: 'result', result: res });
    }
  }

  try {
    for (;;) {
      if (stopped() || fatal !== undefined || journal.error) break;
      // at most `concurrency` calls; while placements fail, one placement at a time
      if (inFlight.size >= o.concurrency || (streak.length > 0 && placing > 0)) {
        await waker.wait();
        continue;
      }
      const now = clock.now();
      let job: StateRow | CampaignRow | undefined =
        waiting[0] !== undefined && waiting[0].retryAt! <= now ? waiting[0] : undefined;
      if (!job && !lookahead && !exhausted && journal.window < windowMax) {
        const next = await (clock.io ? clock.io(o.rows.next()) : o.rows.next());
        if (next.done) exhausted = true;
        else if (next.value.kind === 'invalid') {
          const v = next.value;
          const res: RowResult = {
            number: v.number,
            outcome: 'invalid',
            callStatus: '',
            lastStep: '',
            durationMs: null,
            attempts: 0,
            callid: '',
            line: v.line,
            detail: v.reason,
          };
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
        else if (streak.holding)
          finish(streak.close()); // no placement left to tell: the rows refused on their last attempt failed
        else if (exhausted)
          break; // every row done
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

    // stopping: the calls in progress followed for stopWaitMs at most; the placements in
    // flight waited for to their answer or their timeout (a halt aborts them)
    if (inFlight.size > 0) {
      if (!halt.signal.aborted) {
        const ac = new AbortController();
        const halted = new Promise<void>((r) => halt.signal.addEventListener('abort', () => r(), { once: true }));
        await Promise.race([
          Promise.allSettled([...inFlight]),
          halted,
          clock.sleep(o.stopWaitMs, ac.signal).catch(() => undefined),
        ]);
        ac.abort();
      }
      if (inFlight.size > 0) halt.abort(new Error('the campaign stopped'));
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    }
    const done =
      !stopped() &&
      fatal === undefined &&
      !journal.error &&
      exhausted &&
      lookahead === undefined &&
      waiting.length === 0 &&
      journal.window === 0;
    if (done) journal.finish();
    await journal.flushed().catch(() => undefined);
    if (journal.error)
      return { status: 'failed', message: `could not save the campaign's state or results: ${journal.error.message}` };
    if (fatal !== undefined) return { status: 'failed', message: fatal };
    if (done) return { status: 'finished' };
    return { status: 'stopped' };
  } finally {
    o.stop?.removeEventListener('abort', onStop);
    o.halt?.removeEventListener('abort', onHalt);
    journal.onError = undefined;
  }
}
