/**
 * What a campaign has done, kept on disk so that it can stop at any moment and go on later
 * without calling a number twice:
 *
 * - the results file: a line per row, in the CSV's order, appended once every row before it
 *   has its result (./results.ts);
 * - the state file (JSON): the CSV it is about (path, size, SHA-256), the app, the results
 *   file and how many of its bytes are final, `next` (the first row without its line in the
 *   results), and the rows from `next` on that were started: being placed, called (the
 *   outbound call's id, followed again after a restart), waiting for a retry (when), done
 *   (their result, until the rows before them are done).
 *
 * Each change is saved: results appended and synced, then the state written to a temporary
 * file, synced and renamed over the old one (atomic: a crash leaves the old state or the new
 * one). Saves run one at a time, off the caller's path; the changes made while one runs go
 * together into the next. A restart cuts the results file back to the bytes the state counts.
 * A lock file (`<state>.lock`, the pid) keeps a second process off the same campaign
 * (./state-file.ts: the file's shape, its checks, the atomic write, the lock).
 */
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { RESULTS_HEADER, resultLines } from './results.js';
import {
  dropLock,
  parseState,
  STATE_FORMAT,
  takeLock,
  writeAtomically,
  type CampaignState,
  type StateRow,
} from './state-file.js';
import type { CampaignRow, RowRead, RowResult } from './types.js';

export { parseState, STATE_FORMAT, type CampaignState, type StateRow } from './state-file.js';

export interface JournalSetup {
  statePath: string;
  resultsPath: string;
  csv: CampaignState['csv'];
  app: string;
  /** The results path was given (--results): a resumed state must name the same file. */
  resultsGiven?: boolean;
}

export type Opened =
  /** appWas: the app the state had, when it changes (allowed while no attempt was counted). */
  { ok: true; journal: Journal; resumed: boolean; appWas?: string } | { ok: false; finished: boolean; message: string };

export class Journal {
  readonly rows = new Map<number, StateRow>();
  next: number;
  finished: boolean;
  /** Set when a save failed: the campaign must stop (the state on disk is the last good one). */
  error: Error | undefined;
  onError: (() => void) | undefined;
  /** The results file: the state's (a resumed campaign), else the one set up. */
  readonly resultsFile: string;
  /** The bytes of the results file that were final when the journal was opened (an earlier run's lines). */
  readonly resultsBytesAtOpen: number;
  /** Attempts counted, every run: placing() adds one, refund() takes it back. */
  attemptsSpent: number;
  private resultsBytes: number;
  private pending: RowResult[] = [];
  private saving: Promise<void> | undefined;
  private dirty = false;

  private constructor(
    private readonly setup: JournalSetup,
    private readonly results: FileHandle,
    state: CampaignState,
  ) {
    this.next = state.next;
    this.finished = state.finished;
    this.resultsBytes = state.resultsBytes;
    this.resultsBytesAtOpen = state.resultsBytes;
    this.resultsFile = state.results;
    // an older state without the count: as if calls were placed (its app may not change)
    this.attemptsSpent = state.attemptsSpent ?? (state.next > 0 || state.rows.length > 0 ? 1 : 0);
    for (const r of state.rows) this.rows.set(r.index, { ...r, vars: {} });
  }

  /** A resumed campaign: the rows waiting for a retry need their variables, from the CSV. */
  async fillVars(rows: AsyncIterable<RowRead>): Promise<void> {
    const want = new Set([...this.rows.values()].filter((r) => r.phase === 'waiting').map((r) => r.index));
    if (want.size === 0) return;
    for await (const r of rows) {
      if (r.kind !== 'row' || !want.has(r.row.index)) continue;
      this.rows.get(r.row.index)!.vars = r.row.vars;
      want.delete(r.row.index);
      if (want.size === 0) break;
    }
  }

  /** Opens (resumes) the campaign of setup.statePath, or starts it. */
  static async open(setup: JournalSetup): Promise<Opened> {
    const { statePath, resultsPath } = setup;
    const text = await readFile(statePath, 'utf8').catch((e: NodeJS.ErrnoException) =>
      e.code === 'ENOENT' ? undefined : Promise.reject(e),
    );
    let state: CampaignState;
    let resumed = false;
    if (text !== undefined) {
      const s = parseState(text);
      if (typeof s === 'string')
        return {
          ok: false,
          finished: false,
          message:
            `${statePath} is not a campaign state file callscript can read (${s}): move it away to start the ` +
            `campaign over`,
        };
      const why = mismatch(s, setup);
      if (why)
        return {
          ok: false,
          finished: false,
          message:
            `${statePath} is the state of another campaign: ${why}; give another --state to start this one, or ` +
            `move the state file away to start over`,
        };
      if (s.finished)
        return {
          ok: false,
          finished: true,
          message:
            `the campaign of ${s.csv.path} finished already (results in ${s.results}): its state ` +
            `file ${statePath} is kept so that no number is called twice; move it away to run the campaign ` +
            `again`,
        };
      state = s;
      resumed = true;
    } else {
      if (await exists(resultsPath))
        return {
          ok: false,
          finished: false,
          message:
            `${resultsPath} exists already and no campaign state (${statePath}) says it is this campaign's: ` +
            `move it away, or give another --results`,
        };
      state = {
        format: STATE_FORMAT,
        csv: setup.csv,
        app: setup.app,
        results: resultsPath,
        resultsBytes: Buffer.byteLength(RESULTS_HEADER),
        next: 0,
        finished: false,
        rows: [],
      };
    }
    const lock = await takeLock(`${statePath}.lock`);
    if (lock) return { ok: false, finished: false, message: lock };
    let fh: FileHandle;
    try {
      if (resumed) {
        const size = (await stat(state.results).catch(() => undefined))?.size;
        if (size === undefined || size < state.resultsBytes) {
          await dropLock(statePath);
          return {
            ok: false,
            finished: false,
            message:
              `${state.results} is ` +
              (size === undefined
                ? 'missing'
                : `shorter (${size} bytes) than the ${state.resultsBytes} bytes ${statePath} counts`) +
              ': the results of the rows done are lost; move the state file away to start over',
          };
        }
        fh = await open(state.results, 'r+');
        await fh.truncate(state.resultsBytes);
      } else {
        fh = await open(resultsPath, 'wx');
        await fh.write(RESULTS_HEADER, 0);
      }
    } catch (e) {
      await dropLock(statePath);
      throw e;
    }
    const j = new Journal(setup, fh, state);
    if (!resumed) await j.saveNow();
    return { ok: true, journal: j, resumed, ...(resumed && state.app !== setup.app ? { appWas: state.app } : {}) };
  }

  /** Rows started (placing, calling, waiting) or done but not in the results yet. */
  get window(): number {
    return this.rows.size;
  }

  /** The row has its result already, or was started (a resumed campaign reads past it). */
  known(index: number): boolean {
    return index < this.next || this.rows.has(index);
  }

  /** An attempt starts: the row is being placed. */
  placing(row: CampaignRow | StateRow): StateRow {
    let r = this.rows.get(row.index);
    if (!r) {
      r = { index: row.index, line: row.line, number: row.number, vars: row.vars, phase: 'placing', attempts: 0 };
      this.rows.set(r.index, r);
    }
    r.phase = 'placing';
    r.attempts++;
    this.attemptsSpent++;
    delete r.id;
    delete r.retryAt;
    this.save();
    return r;
  }

  placed(r: StateRow, id: string): void {
    r.phase = 'calling';
    r.id = id;
    this.save();
  }

  waiting(r: StateRow, retryAt: number, last: RowResult): void {
    r.phase = 'waiting';
    r.retryAt = retryAt;
    r.last = last;
    delete r.id;
    this.save();
  }

  /** An attempt that was not the row's fault (nothing placed): not counted; the row waits to be tried again. */
  refund(r: StateRow, retryAt: number, last: RowResult): void {
    r.attempts--;
    this.attemptsSpent--;
    this.waiting(r, retryAt, { ...last, attempts: r.attempts });
  }

  /** An earlier attempt of the row, found not to be its fault, is not counted (a row done keeps its count). */
  giveBack(r: StateRow): void {
    if (r.phase === 'done' || r.attempts === 0) return;
    r.attempts--;
    this.attemptsSpent--;
    if (r.last) r.last = { ...r.last, attempts: r.attempts };
    this.save();
  }

  done(r: StateRow, result: RowResult): void {
    r.phase = 'done';
    r.result = result;
    r.vars = {};
    delete r.id;
    delete r.retryAt;
    delete r.last;
    this.advance();
    this.save();
  }

  /** A row that cannot be called: done at once. */
  invalid(index: number, line: number, result: RowResult): void {
    this.rows.set(index, { index, line, number: result.number, vars: {}, phase: 'done', attempts: 0, result });
    this.advance();
    this.save();
  }

  /** Every row has its result. */
  finish(): void {
    this.finished = true;
    this.save();
  }

  /** Resolves when everything changed so far is on disk; throws the save's error. */
  async flushed(): Promise<void> {
    while (this.saving) await this.saving;
    if (this.error) throw this.error;
  }

  /** Saves what is left, closes the results file and drops the lock. */
  async close(): Promise<void> {
    try {
      await this.flushed();
    } finally {
      await this.results.close().catch(() => undefined);
      await dropLock(this.setup.statePath);
    }
  }

  private advance(): void {
    for (let r = this.rows.get(this.next); r?.phase === 'done'; r = this.rows.get(this.next)) {
      this.pending.push(r.result!);
      this.rows.delete(this.next);
      this.next++;
    }
  }

  private save(): void {
    this.dirty = true;
    if (this.saving || this.error) return;
    this.saving = (async () => {
      try {
        while (this.dirty && !this.error) {
          this.dirty = false;
          await this.saveNow();
        }
      } catch (e) {
        this.error = e instanceof Error ? e : new Error(String(e));
        this.onError?.();
      } finally {
        this.saving = undefined;
      }
    })();
  }

  /** One save: the results lines pending, synced, then the state, atomically. */
  private async saveNow(): Promise<void> {
    const lines = resultLines(this.pending);
    this.pending = [];
    const at = this.resultsBytes;
    this.resultsBytes += Buffer.byteLength(lines);
    const state: CampaignState = {
      format: STATE_FORMAT,
      csv: this.setup.csv,
      app: this.setup.app,
      results: this.resultsFile,
      resultsBytes: this.resultsBytes,
      next: this.next,
      finished: this.finished,
      // without their variables (read again from the CSV on a resume: ./rows.ts), so a save stays small
      rows: [...this.rows.values()].sort((a, b) => a.index - b.index).map(({ vars: _vars, ...r }) => r as StateRow),
      attemptsSpent: this.attemptsSpent,
    };
    const json = `${JSON.stringify(state)}\n`;
    if (lines !== '') await this.results.write(lines, at);
    await this.results.datasync();
    await writeAtomically(this.setup.statePath, json);
  }
}

function mismatch(s: CampaignState, setup: JournalSetup): string | undefined {
  if (s.csv.path !== setup.csv.path) return `it is about ${s.csv.path}`;
  if (s.csv.sha256 !== setup.csv.sha256 || s.csv.bytes !== setup.csv.bytes)
    return `${setup.csv.path} changed since the campaign started (its content is not the same: rows would not match)`;
  // an app may be corrected while no call was placed with it (a wrong --app stops the campaign at its first call)
  if (s.app !== setup.app && s.attemptsSpent !== 0) return `it calls with the app ${s.app}, not ${setup.app}`;
  if (setup.resultsGiven && s.results !== setup.resultsPath)
    return `its results go to ${s.results}, not ${setup.resultsPath}`;
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}
