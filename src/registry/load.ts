/**
 * The thin fs side of the registry: list the flow files of a directory and read them
 * once they have settled (unchanged for a while: see readStableFlows), so that a file an
 * editor or a copy is still writing is never compiled.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';

/** The most a flow file is read, in bytes: the largest limits.flow_file_bytes allowed (64 MiB). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

/** Error codes of a flow file that is not read, and is left out (reported with unreadableReason). */
const LEFT_OUT = new Set(['ELOOP', 'ENOTREG', 'EFBIG']);

/** Whether `err` (from readFlowText) means "this file is left out", not "the directory cannot be read". */
export function isLeftOut(err: unknown): boolean {
  return LEFT_OUT.has((err as NodeJS.ErrnoException).code ?? '');
}

function refusal(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/**
 * A flow file's text. A symbolic link is followed only when its target is inside the
 * file's directory (a Kubernetes ConfigMap's links into `..data/`): a link that leaves
 * it, e.g. one a contribution carries to callscript.yaml or /etc/passwd, could make the
 * checker print another file in its diagnostics, logs and /health (ELOOP). Only regular
 * files are read, opened without blocking (a FIFO named `x.yaml` would hang the open and
 * the read for ever: ENOTREG), and at most MAX_READ_BYTES of them (EFBIG).
 */
export async function readFlowText(file: string): Promise<string> {
  let target = file;
  if ((await lstat(file)).isSymbolicLink()) {
    const [real, root] = await Promise.all([realpath(file), realpath(dirname(file))]);
    if (!real.startsWith(root + sep)) throw refusal('ELOOP', `${file} links outside its directory`);
    target = real;
  }
  const h = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await h.stat();
    if (!st.isFile()) throw refusal('ENOTREG', `${file} is not a regular file`);
    if (st.size > MAX_READ_BYTES) throw refusal('EFBIG', `${file} is ${st.size} bytes`);
    // Read at most one byte past the cap: a file that grows while read is read on up to it.
    let buf = Buffer.allocUnsafe(Math.min(st.size, MAX_READ_BYTES) + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await h.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) return buf.toString('utf8', 0, got);
      got += bytesRead;
      if (got < buf.length) continue;
      if (got > MAX_READ_BYTES) throw refusal('EFBIG', `${file} is more than ${MAX_READ_BYTES} bytes`);
      const more = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_READ_BYTES + 1));
      buf.copy(more);
      buf = more;
    }
  } finally {
    await h.close();
  }
}

/** Why a flow file is not read, in words. */
export function unreadableReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP')
    return (
      'it is a symbolic link to a file outside the flows directory (a link could show another file in ' + 'diagnostics)'
    );
  if (code === 'ENOTREG')
    return 'it is not a regular file (a FIFO, a device or a socket): flow files must be regular files';
  if (code === 'EFBIG')
    return `it is larger than any flow file may be (${MAX_READ_BYTES.toLocaleString('en-US')} bytes)`;
  return code ?? (err instanceof Error ? err.message : String(err));
}

/**
 * Flow files of a directory: *.yaml and *.yml, not scenarios (*.test.yaml), caller scripts (*.caller.yaml), the config,
 * nor dotfiles (editor temporaries).
 */
export async function listFlowFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => isFlowFileName(n))
    .sort()
    .map((n) => join(dir, n));
}

export function isFlowFileName(n: string): boolean {
  return (
    /\.ya?ml$/.test(n) &&
    !n.startsWith('.') &&
    !/\.test\.ya?ml$/.test(n) &&
    !isCallerScriptName(n) &&
    !/^callscript\.ya?ml$/.test(n)
  );
}

/** A caller script (`*.caller.yaml`, docs/caller-script.md): never a flow, wherever it is found or named. */
export function isCallerScriptName(path: string): boolean {
  return /\.caller\.ya?ml$/.test(path);
}

/** Why a caller script named as a flow is not one (validate, test, paths, graph, simulate). */
export function callerScriptNotFlow(path: string): string {
  return (
    `${path} is a caller script (*.caller.yaml), not a flow: caller scripts are played by callscript call ` +
    `--caller and simulate --caller`
  );
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
        out.push({
          file,
          text,
          mtimeMs: before.mtimeMs === after.mtimeMs && before.size === after.size ? after.mtimeMs : -1,
        });
      } catch (err) {
        // a link outside the directory, a FIFO, a huge file: left out (reported at start and by validate)
        if (isLeftOut(err)) return;
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // Renamed away between listing and reading: the next read sees the new state.
        out.push({ file, text: '', mtimeMs: -1 });
      }
    }),
  );
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

const same = (a: Snap[], b: Snap[]) =>
  a.length === b.length &&
  a.every((x, i) => x.mtimeMs >= 0 && x.file === b[i]!.file && x.text === b[i]!.text && x.mtimeMs === b[i]!.mtimeMs);

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
export async function readStableFlows(
  dir: string,
  settleMs = 1000,
  giveUpMs = Math.max(SETTLE_GIVE_UP_MS, 5 * settleMs),
): Promise<{ file: string; text: string }[] | undefined> {
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

/**
 * Plain read (startup): every flow file once; the files left out (links outside, FIFOs, huge files) apart, with why.
 */
export async function readFlows(
  dir: string,
): Promise<{ texts: { file: string; text: string }[]; unread: { file: string; why: string }[] }> {
  const files = await listFlowFiles(dir);
  const texts: { file: string; text: string }[] = [];
  const unread: { file: string; why: string }[] = [];
  await Promise.all(
    files.map(async (file) => {
      try {
        texts.push({ file, text: await readFlowText(file) });
      } catch (err) {
        if (!isLeftOut(err)) throw err;
        unread.push({ file, why: unreadableReason(err) });
      }
    }),
  );
  texts.sort((a, b) => (a.file < b.file ? -1 : 1));
  return { texts, unread };
}
