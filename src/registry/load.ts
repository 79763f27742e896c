/**
 * The thin fs side of the registry: list the flow files of a directory and read them
 * until stable (two reads, a short gap apart, give the same bytes and mtimes), so that a
 * file an editor is still writing is never compiled.
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

/**
 * The flow files of `dir` with their texts, once two reads `gapMs` apart agree. Throws
 * the fs error when the directory cannot be read; `undefined` if it never settles.
 */
export async function readStableFlows(dir: string, gapMs = 40, tries = 25): Promise<{ file: string; text: string }[] | undefined> {
  let prev = await snapshot(dir);
  for (let i = 0; i < tries; i++) {
    await new Promise((r) => setTimeout(r, gapMs));
    const next = await snapshot(dir);
    if (same(prev, next)) return next.map(({ file, text }) => ({ file, text }));
    prev = next;
  }
  return undefined;
}

/** Plain read (startup): every flow file once. */
export async function readFlows(dir: string): Promise<{ file: string; text: string }[]> {
  const files = await listFlowFiles(dir);
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(file, 'utf8') })));
}
