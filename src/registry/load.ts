/**
 * The thin fs side of the registry: list the flow files of a directory and read them
 * once they have settled (unchanged for a while: see readStableFlows), so that a file an
 * editor or a copy is still writing is never compiled.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Flow files of a directory: *.yaml and *.yml, not scenarios (*.test.yaml), the config, nor dotfiles (editor temporaries). */
export async function listFlowFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => isFlowFileName(n))
    .sort()
    .map((n) => join(dir, n));
}

export function isFlowFileName(n: string): boolean {
  return /\.ya?ml$/.test(n) && !n.startsWith('.') && !/\.test\.ya?ml$/.test(n) && !/^callscript\.ya?ml$/.test(n);
}

interface Snap {
  file: string;
  text: string;
  mtimeMs: number;
}

async function snapshot(dir: string): Promise<Snap[]> {
  const files = await listFlowFiles(dir);
  const out: Snap[] = [];
  await Promise.all(
    files.map(async (file) => {
      try {
        const before = await stat(file);
        const text = await readFile(file, 'utf8');
        const after = await stat(file);
        // Changed while being read: make it differ from any other read, so we try again.
        out.push({ file, text, mtimeMs: before.mtimeMs === after.mtimeMs && before.size === after.size ? after.mtimeMs : -1 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // Renamed away between listing and reading: the next read sees the new state.
        out.push({ file, text: '', mtimeMs: -1 });
      }
    }),
  );
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

const same = (a: Snap[], b: Snap[]) =>
  a.length === b.length && a.every((x, i) => x.mtimeMs >= 0 && x.file === b[i]!.file && x.text === b[i]!.text && x.mtimeMs === b[i]!.mtimeMs);

/** How long ago the newest of the files was written (0 when one changed while being read). */
function quietFor(files: Snap[], now: number): number {
  let age = Infinity;
  for (const f of files) age = Math.min(age, f.mtimeMs < 0 ? 0 : now - f.mtimeMs);
  return age;
}

/** How long `readStableFlows` waits for files to settle before it gives up. */
export const SETTLE_GIVE_UP_MS = 30_000;

/**
 * The flow files of `dir` with their texts, once none has changed for `settleMs`: when the
 * newest was written at least that long ago, one read; else reads until two taken
 * `settleMs` apart agree (bytes, size and mtime). A writer that pauses for less than
 * `settleMs` between two chunks is waited for; one that pauses longer can be caught half
 * way, which is why deployments write a temporary file and rename it (docs/admin.md).
 * Throws the fs error when the directory cannot be read; `undefined` if the files are
 * still changing after `giveUpMs`.
 */
export async function readStableFlows(dir: string, settleMs = 1000, giveUpMs = Math.max(SETTLE_GIVE_UP_MS, 5 * settleMs)): Promise<{ file: string; text: string }[] | undefined> {
  const texts = (s: Snap[]) => s.map(({ file, text }) => ({ file, text }));
  const until = Date.now() + giveUpMs;
  let prev = await snapshot(dir);
  let prevAt = Date.now();
  for (;;) {
    if (prev.every((x) => x.mtimeMs >= 0) && quietFor(prev, Date.now()) >= settleMs) return texts(prev);
    if (Date.now() >= until) return undefined;
    const wait = Math.min(settleMs, Math.max(10, settleMs - quietFor(prev, Date.now())));
    await new Promise((r) => setTimeout(r, wait));
    const next = await snapshot(dir);
    if (same(prev, next)) {
      if (Date.now() - prevAt >= settleMs) return texts(next);
    } else {
      prev = next;
      prevAt = Date.now();
    }
  }
}

/** Plain read (startup): every flow file once. */
export async function readFlows(dir: string): Promise<{ file: string; text: string }[]> {
  const files = await listFlowFiles(dir);
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(file, 'utf8') })));
}
