/**
 * File operations of --data, each durable when it returns: a whole file is written to a
 * temporary file beside it, synced, renamed over the target, and the directory synced
 * (so that the rename itself survives a crash). `Disk` is node:fs/promises by default;
 * tests give one that fails on purpose.
 */
import * as fsp from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface Disk {
  open(path: string, flags: string): Promise<fsp.FileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  readFile(path: string): Promise<Buffer>;
}

export const nodeDisk: Disk = {
  open: (path, flags) => fsp.open(path, flags),
  rename: fsp.rename,
  unlink: fsp.unlink,
  readdir: (path) => fsp.readdir(path),
  readFile: (path) => fsp.readFile(path),
};

/** `path`'s content, or undefined when it does not exist. */
export async function readIfExists(disk: Disk, path: string): Promise<Buffer | undefined> {
  try {
    return await disk.readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Replaces `path` with `text`, durably: temporary file, fsync, rename, fsync of the directory. */
export async function writeFileDurably(disk: Disk, path: string, text: string, seq: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${seq}.tmp`;
  try {
    const fh = await disk.open(tmp, 'wx');
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await disk.rename(tmp, path);
  } catch (err) {
    await disk.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(disk, dirname(path));
}

/** fsync of a directory: makes a rename or a new file in it durable (POSIX; a no-op on Windows). */
export async function syncDir(disk: Disk, dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await disk.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Temporary files a crash left beside `file` (ours end in `.tmp`): removed; their names. */
export async function removeTemporaries(disk: Disk, file: string): Promise<string[]> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.`;
  let names: string[];
  try {
    names = await disk.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const stale = names.filter((n) => n.startsWith(prefix) && n.endsWith('.tmp'));
  for (const n of stale) await disk.unlink(join(dir, n));
  if (stale.length > 0) await syncDir(disk, dir);
  return stale;
}
