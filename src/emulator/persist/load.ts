/**
 * Reading --data at start: temporary files a crash left are removed, the data file (the
 * snapshot) is read, then the journal beside it (`<file>.journal`) is replayed on it.
 * A torn last record is dropped with a note; a corrupt record elsewhere stops the start.
 */
import { checkData, checkHeader, checkRecord } from './check.js';
import { readIfExists, removeTemporaries, type Disk } from './files.js';
import { scanJournal } from './format.js';
import type { EmulatorData, Op } from '../store.js';

export const journalOf = (file: string) => `${file}.journal`;

export interface Loaded {
  /** The snapshot; undefined when the data file does not exist yet. */
  data: EmulatorData | undefined;
  /** The journal's changes, to apply on the snapshot in order. */
  ops: Op[];
  /** The id generator's state after the last change replayed. */
  ids: string | undefined;
  generation: number;
  snapshotBytes: number;
  /** Bytes of the journal when it can be appended to as it is. */
  journalBytes: number;
  /** Why the journal must be written anew before new changes (missing, from an older generation, torn). */
  rewrite: string | undefined;
  /** What the log should say (temporaries removed, a torn record dropped). */
  notes: string[];
}

export type LoadResult = { ok: true; loaded: Loaded } | { ok: false; message: string };

export async function loadData(disk: Disk, file: string): Promise<LoadResult> {
  if (/\.(sqlite3?|db)$/i.test(file))
    return { ok: false, message: `${file}: SQLite data files are not supported; give a .json file` };
  const journal = journalOf(file);
  const notes: string[] = [];
  let snapshot: Buffer | undefined;
  let log: Buffer | undefined;
  try {
    const removed = await removeTemporaries(disk, file);
    if (removed.length > 0)
      notes.push(`removed ${removed.length} temporary file(s) left by a crash: ${removed.join(', ')}`);
    snapshot = await readIfExists(disk, file);
    log = await readIfExists(disk, journal);
  } catch (err) {
    return { ok: false, message: `${file}: cannot read: ${(err as Error).message}` };
  }
  let data: EmulatorData | undefined;
  if (snapshot) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(snapshot.toString('utf8'));
    } catch (err) {
      return { ok: false, message: `${file}: not valid JSON (${(err as Error).message}); fix or remove the file` };
    }
    const bad = checkData(parsed);
    if (bad) return { ok: false, message: `${file}: not an emulator data file: ${bad}` };
    data = parsed as EmulatorData;
  }
  const generation = data?.generation ?? 0;
  const base = { data, generation, snapshotBytes: snapshot?.length ?? 0, notes };
  if (!log)
    return { ok: true, loaded: { ...base, ops: [], ids: undefined, journalBytes: 0, rewrite: 'no journal yet' } };

  const corrupt = (offset: number, reason: string): LoadResult => ({
    ok: false,
    message:
      `${journal}: corrupt record at byte ${offset}: ${reason}. The journal cannot be trusted: restore ${file} ` +
      `and ${journal} from a backup, or move the journal away to start from ${file} alone (the changes it ` +
      `holds are then lost)`,
  });
  const scan = scanJournal(log);
  if (!scan.ok) return corrupt(scan.offset, scan.reason);
  const [head, ...rest] = scan.scanned.records;
  const header = head ? checkHeader(head.value) : undefined;
  if (!header)
    return { ok: true, loaded: { ...base, ops: [], ids: undefined, journalBytes: 0, rewrite: 'the journal is empty' } };
  if (!header.ok) return corrupt(0, header.reason);
  if (header.generation < generation) {
    notes.push(
      `${journal} is from generation ${header.generation}, already in ${file} (generation ${generation}): not replayed`,
    );
    return {
      ok: true,
      loaded: { ...base, ops: [], ids: undefined, journalBytes: 0, rewrite: 'the journal is older than the data file' },
    };
  }
  if (header.generation > generation) {
    const what = data ? `is from generation ${generation}` : 'is missing';
    return {
      ok: false,
      message:
        `${journal} continues generation ${header.generation} of ${file}, but ${file} ${what}: the data file ` +
        `was replaced or lost. Restore the matching ${file}, or move the journal away to start from ${file} ` +
        `alone`,
    };
  }
  const ops: Op[] = [];
  let ids: string | undefined;
  for (const r of rest) {
    const c = checkRecord(r.value);
    if (!c.ok) return corrupt(r.offset, c.reason);
    ops.push(c.op);
    ids = c.ids;
  }
  const torn = scan.scanned.torn;
  if (torn)
    notes.push(
      `${journal}: ignored an incomplete last record at byte ${torn.offset} (${torn.bytes} bytes; a crash ` +
        `during its write, before it was acknowledged)`,
    );
  return {
    ok: true,
    loaded: { ...base, ops, ids, journalBytes: log.length, rewrite: torn ? 'its last record was torn' : undefined },
  };
}
