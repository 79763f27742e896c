/**
 * `npm run bench:lsp` (node --import tsx bench/lsp.ts): how long an editor waits for diagnostics of a big flow.
 *
 * The language server runs in this process (startServer on a pair of streams, debounce 0), joined to a JSON-RPC
 * client as an editor joins it over stdio. For generated flows of 2,000 and 10,000 steps (test/helpers/big-flow.ts;
 * one step lacks its `default:`, so every check publishes one UNHANDLED_RESULT warning and the graph checks run as
 * on a clean flow), in a directory whose callscript.yaml raises limits.flow_file_bytes: the time from didOpen to
 * the first diagnostics, then BENCH_CHANGES one-character changes of each kind, sent as incremental edits (as an
 * editor sends them), each timed from the didChange notification to the publishDiagnostics that follows it:
 *   - prompt: a letter of a step's prompt text;
 *   - target: a digit of a step id used as a `goto:` target (another step's id: the graph changes, stays valid);
 *   - step id: a letter added to, then removed from, a step's key that other steps target (UNKNOWN_STEP, then clean).
 * Min, median and max in ms of wall time, and the CPU time of the whole run of each kind.
 *
 * Target (issue: lsp speed): diagnostics for a 2,000-step flow within 300 ms of a one-character change.
 * Env: BENCH_STEPS ("2000,10000"), BENCH_CHANGES (20).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  createConnection,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { startServer } from '../src/lsp/server.js';
import { pathToUri } from '../src/lsp/uris.js';
import { bigFlow } from '../test/helpers/big-flow.js';

const sizes = (process.env.BENCH_STEPS ?? '2000,10000').split(',').map(Number);
const CHANGES = Math.max(1, Number(process.env.BENCH_CHANGES ?? 20));

interface Edit {
  /** 0-based line and character of the replaced range. */
  line: number;
  character: number;
  /** How many characters it replaces (on that line). */
  length: number;
  text: string;
}

/** A server and a client joined by two pipes; `next()` resolves with the next diagnostics published for the uri. */
async function session(root: string) {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
  startServer(server, { debounceMs: 0 });
  const rpc = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  const waiting = new Map<string, (d: Diagnostic[]) => void>();
  rpc.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => {
    const w = waiting.get(p.uri);
    waiting.delete(p.uri);
    w?.(p.diagnostics);
  });
  rpc.onRequest('workspace/configuration', () => []);
  rpc.onRequest('client/registerCapability', () => null);
  rpc.listen();
  await rpc.sendRequest('initialize', { processId: null, rootUri: pathToUri(root), capabilities: {} });
  await rpc.sendNotification('initialized', {});
  let version = 1;
  const next = (uri: string) =>
    new Promise<Diagnostic[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no diagnostics for ${uri} within 120 s`)), 120_000);
      waiting.set(uri, (d) => {
        clearTimeout(timer);
        resolve(d);
      });
    });
  return {
    /** Opens the document; resolves with the first diagnostics and the ms they took. */
    async open(path: string, text: string) {
      const uri = pathToUri(path);
      const published = next(uri);
      const t0 = performance.now();
      void rpc.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version, text } });
      const d = await published;
      return { ms: performance.now() - t0, diagnostics: d };
    },
    /** Sends one incremental edit; resolves with the diagnostics that follow it and the ms they took. */
    async change(path: string, e: Edit) {
      const uri = pathToUri(path);
      const published = next(uri);
      const range = {
        start: { line: e.line, character: e.character },
        end: { line: e.line, character: e.character + e.length },
      };
      const t0 = performance.now();
      void rpc.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: ++version },
        contentChanges: [{ range, text: e.text }],
      });
      const d = await published;
      return { ms: performance.now() - t0, diagnostics: d };
    },
    dispose() {
      rpc.dispose();
      server.dispose();
      toServer.destroy();
      toClient.destroy();
    },
  };
}

/** The bench's flow: bigFlow(steps) with menu_0's `default:` removed (one warning, every check publishes). */
function benchFlow(steps: number): string {
  const text = bigFlow(steps);
  const cut = text.indexOf('      default: { goto: goodbye, say: "Sorry, goodbye." }\n');
  return text.slice(0, cut) + text.slice(text.indexOf('\n', cut) + 1);
}

/** The 0-based line of the first line of `text` that starts with `prefix`, from line `from`. */
function lineOf(lines: string[], prefix: string, from = 0): number {
  for (let i = from; i < lines.length; i++) if (lines[i]!.startsWith(prefix)) return i;
  throw new Error(`no line starts with ${JSON.stringify(prefix)}`);
}

/** The steps edited: spread over the file, never menu_0 (which holds the warning). */
const spread = (menus: number, n: number) =>
  Array.from({ length: n }, (_, k) => 1 + Math.floor(((k + 0.5) * (menus - 1)) / n));

/** The edits of each kind, computed on the text as it is before each one (edits of one kind pile up). */
function* edits(kind: string, lines: string[], menus: number): Generator<Edit> {
  for (const i of spread(menus, CHANGES)) {
    const at = lineOf(lines, `  menu_${i}:`);
    if (kind === 'prompt') {
      // "Menu 12. For the next..." -> "Menu 12. For the nexT..."
      const line = at + 2;
      const character = lines[line]!.indexOf('next') + 3;
      yield { line, character, length: 1, text: lines[line]![character] === 'x' ? 'X' : 'x' };
    } else if (kind === 'target') {
      // `"3": { goto: menu_K, ...}` (K = floor(i/2)): K's last digit moved by one, another step before i
      const line = at + 8;
      const m = /goto: menu_(\d+)/.exec(lines[line]!)!;
      const k = Number(m[1]);
      const other = k % 10 === 0 ? k + 1 : k - 1;
      if (String(other).length !== m[1]!.length) throw new Error(`target ${k}: not a one-character change`);
      const character = m.index + m[0].length - 1;
      yield { line, character, length: 1, text: String(other % 10) };
    } else {
      // `  menu_i:` -> `  menu_iz:` (its callers' targets are UNKNOWN_STEP), then back
      const character = `  menu_${i}`.length;
      yield { line: at, character, length: 0, text: 'z' };
      yield { line: at, character, length: 1, text: '' };
    }
  }
}

function apply(lines: string[], e: Edit): void {
  const l = lines[e.line]!;
  lines[e.line] = l.slice(0, e.character) + e.text + l.slice(e.character + e.length);
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(0).padStart(6);
  return `min ${f(s[0]!)} ms  median ${f(s[Math.floor(s.length / 2)]!)} ms  max ${f(s[s.length - 1]!)} ms`;
};

const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const root = mkdtempSync(join(tmpdir(), 'bench-lsp-'));
try {
  writeFileSync(join(root, 'callscript.yaml'), 'limits: { flow_file_bytes: 67108864 }\n');
  mkdirSync(join(root, 'flows'));
  console.log(`language server diagnostics, node ${process.version}, ${CHANGES} changes of each kind`);
  // warm-up: the checker's modules, the protocol, the JIT
  {
    const s = await session(root);
    const path = join(root, 'flows', 'warm.yaml');
    const text = benchFlow(300);
    await s.open(path, text);
    const lines = text.split('\n');
    for (const kind of ['prompt', 'target', 'step id'])
      for (const e of edits(kind, lines, 299)) {
        apply(lines, e);
        await s.change(path, e);
      }
    s.dispose();
  }
  for (const steps of sizes) {
    const s = await session(root);
    const path = join(root, 'flows', `big-${steps}.yaml`);
    const text = benchFlow(steps);
    const lines = text.split('\n');
    const mib = (Buffer.byteLength(text) / 1024 / 1024).toFixed(2);
    console.log(`\n${steps.toLocaleString('en-US')} steps, ${mib} MiB`);
    const first = await s.open(path, text);
    if (first.diagnostics.length !== 1 || first.diagnostics[0]!.code !== 'UNHANDLED_RESULT')
      throw new Error(`unexpected diagnostics: ${JSON.stringify(first.diagnostics.slice(0, 3))}`);
    console.log(`  ${'first open'.padEnd(10)}${first.ms.toFixed(0).padStart(10)} ms`);
    for (const kind of ['prompt', 'target', 'step id']) {
      const times: number[] = [];
      const c0 = cpu();
      for (const e of edits(kind, lines, steps - 1)) {
        apply(lines, e);
        const r = await s.change(path, e);
        const codes = new Set(r.diagnostics.map((d) => d.code));
        if (!codes.has('UNHANDLED_RESULT') || (kind !== 'step id' && codes.size !== 1))
          throw new Error(`${kind}: unexpected diagnostics: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
        times.push(r.ms);
      }
      const c = (cpu() - c0) / times.length;
      console.log(`  ${kind.padEnd(10)}${stats(times)}  (${c.toFixed(0)} ms cpu a change, ${times.length} changes)`);
    }
    s.dispose();
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
