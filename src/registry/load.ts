/**
 * The thin fs side of the registry: list the flow files of a directory and read them
 * once they have settled (unchanged for a while: see readStableFlows), so that a file an
 * editor or a copy is still writing is never compiled.
 */
import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A flow file's text. Symbolic links are not followed (O_NOFOLLOW: ELOOP): a link in the
 * flows directory, e.g. one a contribution carries, could make the checker print another
 * file (a password file, callscript.yaml) in its diagnostics, logs and /health.
 */
export async function readFlowText(file: string): Promise<string> {
  const h = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await h.readFile('utf8');
  } finally {
    await h.close();
  }
}

/** Why a flow file could not be read, in words (a link gets its own). */
export function unreadableReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return 'it is a symbolic link: flow files must be regular files (a link could show another file in diagnostics)';
  return code ?? (err instanceof Error ? err.message : String(err));
}

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
        const text = await readFlowText(file);
        const after = await stat(file);
        // Changed while being read: make it differ from any other read, so we try again.
        out.push({ file, text, mtimeMs: before.mtimeMs === after.mtimeMs && before.size === after.size ? after.mtimeMs : -1 });
      } catch (err) {
        // a symbolic link is never read: left out (it is reported at start and by validate)
        if ((err as NodeJS.ErrnoException).code === 'ELOOP') return;
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

/** Plain read (startup): every flow file once; the files that cannot be read (links) apart, with why. */
export async function readFlows(dir: string): Promise<{ texts: { file: string; text: string }[]; unread: { file: string; why: string }[] }> {
  const files = await listFlowFiles(dir);
  const texts: { file: string; text: string }[] = [];
  const unread: { file: string; why: string }[] = [];
  await Promise.all(
    files.map(async (file) => {
      try {
        texts.push({ file, text: await readFlowText(file) });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw err;
        unread.push({ file, why: unreadableReason(err) });
      }
    }),
  );
  texts.sort((a, b) => (a.file < b.file ? -1 : 1));
  return { texts, unread };
}
