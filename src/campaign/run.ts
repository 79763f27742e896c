/**
 * A campaign from its CSV file to its exit code: the file checked whole (./rows.ts), the
 * journal opened or resumed (./journal.ts), the scheduler run (./scheduler.ts), progress on
 * stderr (./progress.ts). The command (src/cli/campaign.ts) gives it the Dialer, the signals
 * and the streams.
 *
 * Exit codes: 0 every row has its result (or had, in an earlier run); 1 stopped by a failure
 * (the server unreachable or refusing, the state not writable): the state is saved, the same
 * command goes on; 2 could not start (the CSV unreadable, another campaign's state); 130
 * stopped by `stop` (SIGINT): the state is saved, the same command goes on.
 */
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename } from 'node:path';
import { Journal } from './journal.js';
import type { CampaignSettings } from './options.js';
import { Progress } from './progress.js';
import { countOutcomes } from './results.js';
import { CsvProblem, readRows, scanCsv, type CsvSummary } from './rows.js';
import { runCampaign } from './scheduler.js';
import { realClock, type Clock } from './clock.js';
import type { Dialer } from './types.js';
import { printableLines } from '../terminal/printable.js';

export interface RunContext {
  dialer: Dialer;
  clock?: Clock;
  /** Stop placing calls (the first SIGINT). */
  stop?: AbortSignal;
  /** Stop following the calls in progress too (a second SIGINT). */
  halt?: AbortSignal;
  err: NodeJS.WritableStream;
  /** stderr is a terminal: a progress bar. */
  tty?: boolean;
  columns?: number;
  /** After stop, calls in progress are followed this long at most (default 10 s). */
  stopWaitMs?: number;
  /** Tests: rows started and not written at most. */
  windowMax?: number;
}

export const STOP_WAIT_MS = 10_000;

export async function runCampaignFile(s: CampaignSettings, ctx: RunContext): Promise<number> {
  // a CSV's cells, the server's and the state file's words: control characters escaped
  const say = (line: string) => ctx.err.write(`${printableLines(line)}\n`);
  const name = basename(s.csv);
  const kind = await stat(s.csv).then(fileKind, (e: NodeJS.ErrnoException) => e);
  if (kind instanceof Error)
    return (say(`callscript campaign: cannot read ${s.csv}${kind.code ? ` (${kind.code})` : `: ${kind.message}`}`), 2);
  if (kind !== 'file')
    return (
      say(
        `callscript campaign: ${s.csv} is ${kind}, not a regular file: the campaign reads its CSV twice ` +
          `(checked whole first, then as it calls) and hashes it to resume; save the rows to a file first; no ` +
          `call was placed`,
      ),
      2
    );
  let csv: CsvSummary;
  try {
    csv = await scanCsv(s.csv);
  } catch (e) {
    if (e instanceof CsvProblem)
      return (say(`callscript campaign: ${name}:${e.line}: ${e.message}; no call was placed`), 2);
    const code = (e as NodeJS.ErrnoException).code;
    return (say(`callscript campaign: cannot read ${s.csv}${code ? ` (${code})` : `: ${(e as Error).message}`}`), 2);
  }
  const opened = await Journal.open({
    statePath: s.state,
    resultsPath: s.results,
    resultsGiven: s.resultsGiven,
    app: s.app,
    csv: { path: s.csv, bytes: csv.bytes, sha256: csv.sha256, rows: csv.rows },
  }).catch((e: Error) => ({
    ok: false as const,
    finished: false,
    message: `cannot write the campaign's files: ${e.message}`,
  }));
  if (!opened.ok) return (say(`callscript campaign: ${opened.message}`), opened.finished ? 0 : 2);
  const journal = opened.journal;
  try {
    if (opened.resumed) await journal.fillVars(readRows(s.csv));
    const doneBefore = journal.next + [...journal.rows.values()].filter((r) => r.phase === 'done').length;
    const count = (p: string) => [...journal.rows.values()].filter((r) => r.phase === p).length;
    if (opened.resumed) {
      say(
        `resuming the campaign of ${name}: ${doneBefore} of ${csv.rows} rows done, ${count('calling')} calls ` +
          `followed again, ${count('waiting')} waiting to retry` +
          (count('placing') ? `, ${count('placing')} cut off while placed (not called again: outcome unknown)` : ''),
      );
    } else {
      const every = s.rate >= 1 ? `${s.rate} calls/s` : `a call every ${+(1 / s.rate).toFixed(3)} s`;
      say(
        `campaign of ${name}: ${csv.rows} rows${csv.invalid ? ` (${csv.invalid} invalid)` : ''}, ` +
          `app ${s.app}, ${every}, ${s.concurrency} at once, ${s.retries} retries ` +
          `after ${seconds(s.retryDelayMs)}`,
      );
    }
    if (opened.appWas !== undefined) say(`the app is now ${s.app}: no call was placed with ${opened.appWas}`);
    say(`results: ${journal.resultsFile}\nstate: ${s.state}`);
    // the summary counts the whole campaign: the earlier runs' rows too, as the results file has them
    const outcomesBefore = opened.resumed
      ? await countOutcomes(journal.resultsFile, journal.resultsBytesAtOpen)
      : new Map<string, number>();
    for (const r of journal.rows.values())
      if (r.phase === 'done') outcomesBefore.set(r.result!.outcome, (outcomesBefore.get(r.result!.outcome) ?? 0) + 1);
    const progress = new Progress({
      out: ctx.err,
      tty: ctx.tty ?? false,
      total: csv.rows,
      doneBefore,
      outcomesBefore,
      ...(ctx.columns ? { columns: ctx.columns } : {}),
    });
    const rows = readRows(s.csv, (i) => journal.known(i));
    let outcome;
    try {
      outcome = await runCampaign({
        dialer: ctx.dialer,
        journal,
        rows,
        clock: ctx.clock ?? realClock,
        rate: s.rate,
        concurrency: s.concurrency,
        retries: s.retries,
        retryDelayMs: s.retryDelayMs,
        stopWaitMs: ctx.stopWaitMs ?? STOP_WAIT_MS,
        ...(ctx.stop ? { stop: ctx.stop } : {}),
        ...(ctx.halt ? { halt: ctx.halt } : {}),
        ...(ctx.windowMax ? { windowMax: ctx.windowMax } : {}),
        onEvent: (e) => progress.event(e),
      });
    } catch (e) {
      // the CSV changed under the campaign (a CsvProblem now), or a bug: what is saved stays
      outcome = {
        status: 'failed' as const,
        message: e instanceof CsvProblem ? `${name}:${e.line}: ${e.message}` : (e as Error).message,
      };
    } finally {
      await rows.return(undefined).catch(() => undefined);
    }
    progress.end();
    if (outcome.status === 'finished') {
      say(`campaign finished: ${csv.rows} rows: ${progress.summary()}; results in ${journal.resultsFile}`);
      return 0;
    }
    const left = `the state is saved in ${s.state}: run the same command again to go on (no number is called twice)`;
    if (outcome.status === 'stopped') {
      say(
        `campaign stopped: ${progress.doneCount()} of ${csv.rows} rows ` +
          `done${progress.doneCount() ? ` (${progress.summary()})` : ''}; ${left}`,
      );
      return 130;
    }
    say(`campaign stopped: ${outcome.message}; ${left}`);
    return 1;
  } finally {
    await journal.close().catch((e: Error) => say(`callscript campaign: could not save the state: ${e.message}`));
  }
}

function fileKind(st: Stats): string {
  if (st.isFile()) return 'file';
  if (st.isFIFO()) return 'a pipe';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

function seconds(ms: number): string {
  return ms % 60_000 === 0 && ms > 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
