/**
 * The campaign's state file (./journal.ts keeps it): its shape, read back with every field
 * checked (it comes from disk: anything may be there), written atomically, and the lock file
 * that keeps a second process off the same campaign.
 */
import { open, readFile, unlink, writeFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RowResult } from './types.js';

export const STATE_FORMAT = 'callscript-campaign/1';

export interface StateRow {
  index: number;
  line: number;
  number: string;
  /** In memory only: not saved (a resumed campaign reads them from the CSV again: fillVars). */
  vars: Record<string, string>;
  /** placing: place() was called and gave no id yet; calling: placed, followed; waiting: for a retry; done. */
  phase: 'placing' | 'calling' | 'waiting' | 'done';
  attempts: number;
  /** calling: the outbound call's id. */
  id?: string;
  /** waiting: when to try again (epoch ms). */
  retryAt?: number;
  /** waiting: what the last attempt gave (shown if it is the last). */
  last?: RowResult;
  result?: RowResult;
}

export interface CampaignState {
  format: typeof STATE_FORMAT;
  csv: { path: string; bytes: number; sha256: string; rows: number };
  app: string;
  results: string;
  resultsBytes: number;
  next: number;
  finished: boolean;
  rows: StateRow[];
  /**
   * Attempts counted so far, every run (calls placed or perhaps placed, rows refused); absent in older states. 0: no
   * call placed, the app may still change.
   */
  attemptsSpent?: number;
}

export async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(text);
    await fh.datasync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  // the rename itself is durable once the directory is synced
  const dir = await open(dirname(path), 'r').catch(() => undefined);
  await dir?.sync().catch(() => undefined);
  await dir?.close();
}

/** The lock of a campaign's state: undefined when taken, else why not. */
export async function takeLock(path: string): Promise<string | undefined> {
  for (let tries = 0; tries < 2; tries++) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx' });
      return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      return `the campaign is running already (process ${pid} holds ${path}): one process per campaign`;
    }
    await unlink(path).catch(() => undefined); // a lock left by a process that died
  }
  return `could not take the lock ${path}`;
}

export async function dropLock(statePath: string): Promise<void> {
  await unlink(`${statePath}.lock`).catch(() => undefined);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The state file's JSON, checked field by field (it is read back from disk: anything may be there). */
export function parseState(text: string): CampaignState | string {
  let s: unknown;
  try {
    s = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isObj(s) || s.format !== STATE_FORMAT) return `not of the format ${STATE_FORMAT}`;
  const csv = s.csv;
  if (
    !isObj(csv) ||
    typeof csv.path !== 'string' ||
    !isCount(csv.bytes) ||
    typeof csv.sha256 !== 'string' ||
    !isCount(csv.rows)
  )
    return 'csv';
  if (typeof s.app !== 'string' || typeof s.results !== 'string') return 'app, results';
  if (!isCount(s.resultsBytes) || !isCount(s.next) || typeof s.finished !== 'boolean' || !Array.isArray(s.rows))
    return 'resultsBytes, next, finished, rows';
  if (s.attemptsSpent !== undefined && !isCount(s.attemptsSpent)) return 'attemptsSpent';
  for (const r of s.rows as unknown[]) {
    if (
      !isObj(r) ||
      !isCount(r.index) ||
      (r.index as number) < (s.next as number) ||
      !isCount(r.line) ||
      typeof r.number !== 'string' ||
      !isCount(r.attempts)
    )
      return 'a row';
    if (!['placing', 'calling', 'waiting', 'done'].includes(r.phase as string)) return 'a row phase';
    if (r.phase === 'calling' && typeof r.id !== 'string') return 'a row being called has no id';
    if (r.phase === 'waiting' && typeof r.retryAt !== 'number') return 'a row waiting has no retryAt';
    if (r.phase === 'done' && !isResult(r.result)) return 'a row done has no result';
  }
  return s as unknown as CampaignState;
}

function isResult(r: unknown): boolean {
  return (
    isObj(r) && typeof r.number === 'string' && typeof r.outcome === 'string' && isCount(r.attempts) && isCount(r.line)
  );
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}
