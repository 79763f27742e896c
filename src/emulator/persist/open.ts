/** --data at start: load the data file and its journal into the store, then journal its changes. */
import type { Logger } from '../context.js';
import { Ids } from '../ids.js';
import type { EmulatorStore } from '../store.js';
import { nodeDisk, type Disk } from './files.js';
import { DEFAULT_COMPACT_BYTES, Journal } from './journal.js';
import { loadData } from './load.js';

export interface DataOptions {
  /** Compact the journal once it reaches this many bytes (and the data file's size). */
  compactBytes?: number;
  /** The file system (tests give one that fails). */
  disk?: Disk;
}

/** Fills `store` from `file` and returns the journal that now keeps its changes; throws with a clear message. */
export async function openData(
  store: EmulatorStore,
  file: string,
  log: Logger,
  opts: DataOptions = {},
): Promise<Journal> {
  const disk = opts.disk ?? nodeDisk;
  const r = await loadData(disk, file);
  if (!r.ok) throw new Error(r.message);
  const l = r.loaded;
  for (const note of l.notes) log.warn({ file }, note);
  if (l.data) store.load(l.data);
  for (const op of l.ops) store.apply(op);
  if (l.ids !== undefined) store.ids = new Ids(l.ids);
  const journal = new Journal(file, () => store.toJSON(), l, {
    compactBytes: opts.compactBytes ?? DEFAULT_COMPACT_BYTES,
    disk,
    log,
  });
  try {
    await journal.open();
  } catch (err) {
    throw new Error(`${file}: cannot write: ${(err as Error).message}`, { cause: err });
  }
  store.sink = journal;
  return journal;
}
