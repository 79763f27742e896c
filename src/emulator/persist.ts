/**
 * The optional data file (`--data file.json`): read once at start, rewritten after each
 * change, atomically (write a temporary file beside it, then rename), one write at a
 * time; changes made during a write are written right after it.
 */
import { readFile, rename, writeFile, unlink } from 'node:fs/promises';
import { checkData, type EmulatorData } from './store.js';

export type LoadResult = { ok: true; data: EmulatorData | undefined } | { ok: false; message: string };

/** The file's data; `undefined` when the file does not exist yet. */
export async function loadDataFile(file: string): Promise<LoadResult> {
  if (/\.(sqlite3?|db)$/i.test(file)) return { ok: false, message: `${file}: SQLite data files are not supported; give a .json file` };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, data: undefined };
    return { ok: false, message: `${file}: cannot read: ${(err as Error).message}` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `${file}: not valid JSON (${(err as Error).message}); fix or remove the file` };
  }
  const bad = checkData(data);
  if (bad) return { ok: false, message: `${file}: not an emulator data file: ${bad}` };
  return { ok: true, data: data as EmulatorData };
}

export class Persister {
  private writing: Promise<void> | undefined;
  private dirty = false;
  private seq = 0;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => unknown,
    private readonly onError: (err: Error) => void,
  ) {}

  /** A change happened: write soon. */
  schedule(): void {
    this.dirty = true;
    if (!this.writing) this.writing = this.loop();
  }

  /** Resolves once every change so far is on disk. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async loop(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        await this.writeOnce();
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async writeOnce(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.${++this.seq}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(this.snapshot()), 'utf8');
      await rename(tmp, this.file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      this.onError(err as Error);
    }
  }
}
