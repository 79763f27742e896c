/**
 * --data while the emulator runs: every change is appended to the journal; a change is
 * durable once its record is written and fdatasync'ed. Changes that arrive while a write
 * is under way are written together by the next one (group commit: one fsync for all).
 *
 * Compaction: when the journal reaches max(compactBytes, size of the data file), the
 * whole state is written as a new data file of the next generation (temporary file,
 * fsync, rename, fsync of the directory), then a new journal holding only its header
 * replaces the old one the same way. A crash at any point leaves either the old data file
 * with its journal, or the new data file with a journal that is either the stale old one
 * (its generation is older: not replayed) or the new empty one.
 *
 * A failed write (disk full...) fails the changes of that batch; the next write is then a
 * compaction, which puts the whole state on disk again, so the files never miss a change
 * that later ones depend on.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Logger } from '../context.js';
import type { EmulatorData, Op, StoreSink } from '../store.js';
import { writeFileDurably, type Disk } from './files.js';
import { encodeRecord, headerRecord } from './format.js';
import { journalOf, type Loaded } from './load.js';

/** The journal's default compaction threshold. */
export const DEFAULT_COMPACT_BYTES = 8 * 1024 * 1024;

/** A change could not be made durable. */
export class StorageError extends Error {}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

const SAVED = Promise.resolve();

export class Journal implements StoreSink {
  private readonly journal: string;
  private fh: FileHandle | undefined;
  private queue: string[] = [];
  private queuedBytes = 0;
  /** Changes recorded, and how many of them are durable. */
  private recorded = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private running: Promise<void> | undefined;
  private mustCompact: boolean;
  private generation: number;
  private snapshotBytes: number;
  private journalBytes: number;
  private headerBytes = 0;
  private closed = false;
  private seq = 0;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => EmulatorData,
    loaded: Loaded,
    private readonly opts: { compactBytes: number; disk: Disk; log: Logger },
  ) {
    this.journal = journalOf(file);
    this.generation = loaded.generation;
    this.snapshotBytes = loaded.snapshotBytes;
    this.journalBytes = loaded.journalBytes;
    this.headerBytes = Buffer.byteLength(headerRecord(loaded.generation));
    this.mustCompact = loaded.rewrite !== undefined;
  }

  /** Opens the journal to append to it, or writes the files anew when the load asked for it. */
  async open(): Promise<void> {
    if (this.mustCompact) await this.compact(this.snapshotText());
    else this.fh = await this.opts.disk.open(this.journal, 'a');
  }

  record(op: Op, ids: string): void {
    if (this.closed) {
      this.opts.log.error({ file: this.file, op: op.op }, 'a change after the data file was closed is not saved');
      return;
    }
    const line = encodeRecord({ ids, ...op });
    this.queue.push(line);
    this.queuedBytes += Buffer.byteLength(line);
    this.recorded++;
    this.kick();
  }

  saved(): Promise<void> {
    if (this.durable >= this.recorded || this.closed) return SAVED;
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ upTo: this.recorded, resolve, reject }));
    this.kick();
    return p;
  }

  /** Waits for the writes under way, compacts (a clean stop leaves an empty journal), closes. */
  async close(): Promise<void> {
    while (this.running) await this.running;
    this.closed = true;
    if (this.mustCompact || this.journalBytes > this.headerBytes) {
      try {
        await this.compact(this.snapshotText());
      } catch (err) {
        this.opts.log.error(
          { err, file: this.file },
          'cannot compact the data file at shutdown; the journal keeps the changes',
        );
      }
    }
    await this.fh?.close();
    this.fh = undefined;
  }

  private kick(): void {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  private async run(): Promise<void> {
    while (this.queue.length > 0 || this.waiters.length > 0) {
      // One synchronous step: the batch, its end, and (for a compaction) the state that includes it.
      const lines = this.queue.splice(0);
      const bytes = this.queuedBytes;
      this.queuedBytes = 0;
      const upTo = this.recorded;
      const compact =
        this.mustCompact || this.journalBytes + bytes >= Math.max(this.opts.compactBytes, this.snapshotBytes);
      try {
        if (compact) await this.compact(this.snapshotText());
        else if (lines.length > 0) await this.append(lines.join(''), bytes);
        this.durable = upTo;
        this.settle(upTo);
      } catch (err) {
        this.mustCompact = true;
        const e = new StorageError(
          `the emulator could not write its data file ${this.file} ` +
            `(${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the change may or may not be ` +
            `kept`,
        );
        this.opts.log.error({ err, file: this.file }, 'cannot write the data file');
        this.settle(upTo, e);
      }
    }
  }

  private settle(upTo: number, err?: Error): void {
    while (this.waiters.length > 0 && this.waiters[0]!.upTo <= upTo) {
      const w = this.waiters.shift()!;
      if (err) w.reject(err);
      else w.resolve();
    }
  }

  private async append(text: string, bytes: number): Promise<void> {
    if (!this.fh) throw new Error('the journal is not open');
    await this.fh.appendFile(text, 'utf8');
    await this.fh.datasync();
    this.journalBytes += bytes;
  }

  private snapshotText(): string {
    const { version, ...rest } = this.snapshot();
    return JSON.stringify({ version, generation: this.generation + 1, ...rest });
  }

  /** Writes `text` (the whole state, of the next generation) as the data file, then an empty journal. */
  private async compact(text: string): Promise<void> {
    const generation = this.generation + 1;
    await writeFileDurably(this.opts.disk, this.file, text, ++this.seq);
    this.generation = generation;
    this.snapshotBytes = Buffer.byteLength(text);
    // From here the old journal is stale: nothing more may be appended to it.
    const old = this.fh;
    this.fh = undefined;
    await old?.close().catch(() => undefined);
    const header = headerRecord(generation);
    await writeFileDurably(this.opts.disk, this.journal, header, ++this.seq);
    this.fh = await this.opts.disk.open(this.journal, 'a');
    this.journalBytes = this.headerBytes = Buffer.byteLength(header);
    this.mustCompact = false;
    this.opts.log.info({ file: this.file, generation, bytes: this.snapshotBytes }, 'data file compacted');
  }
}
