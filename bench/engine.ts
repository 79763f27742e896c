/**
 * Micro-benchmark of the call step: ns and bytes allocated per request of `advance` (restore
 * the call's xstate snapshot, one macrostep of the flow's machine, the reply and the state to
 * store), on the front-desk example flow; beside it, in the same run, a trivial xstate
 * transition (a two-state machine, one event: xstate's own floor) and the ratio of each case
 * to it. Also the reply serializer alone.
 *
 * Bytes per op: the heap's growth over batches of calls in which no garbage collection ran
 * (node --expose-gc: a full collection before each batch; a batch whose heap shrank had a
 * collection and is dropped), the median of the batches kept. Without --expose-gc it is not
 * printed. Target (issue 23): `advance` <= 12 µs, <= 12 KB per request.
 *
 *   npm run bench:engine      (node --expose-gc --max-semi-space-size=64 --import tsx bench/engine.ts)
 */
import { readFileSync } from 'node:fs';
import { createActor, createMachine } from 'xstate';
import { advance } from '../src/engine/advance.js';
import { serializeReply } from '../src/engine/serialize.js';
import type { CallState } from '../src/engine/types.js';
import { checkFlow } from '../src/flow/check.js';
import { compileFlow } from '../src/engine/compile.js';
import type { RtRequest } from '../src/protocol/rt.js';

const root = new URL('..', import.meta.url).pathname;
const text = readFileSync(`${root}flows/front-desk.yaml`, 'utf8');
const { model, diagnostics } = checkFlow(text, 'flows/front-desk.yaml');
if (!model) throw new Error(JSON.stringify(diagnostics));
const flow = compileFlow(model, text);
const opts = { now: 0, unknownCall: 'restart' as const };

const base: RtRequest = {
  app: 'APP1',
  callid: '18446744073709551615',
  request_hash: null,
  cli_name: 'Alice',
  cli_number: '+447700900123',
  date_started: '2024-05-01 10:00:00',
  number: '+442079460000',
  command: '',
  command_id: 0,
  command_result: '',
  command_error: '',
  call_status: 'UP',
  cdr_field: '',
  variables: { crm: 'C-0042' },
  variablesRaw: '{"crm":"C-0042"}',
};

const gc = (globalThis as { gc?: () => void }).gc;

/** Bytes allocated per call of `fn`: the median heap growth per call over GC-free batches (undefined: no gc). */
function bytesPerOp(fn: () => unknown, batch = 200, batches = 15): number | undefined {
  if (!gc) return undefined;
  const kept: number[] = [];
  for (let b = 0; b < batches * 3 && kept.length < batches; b++) {
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < batch; i++) fn();
    const grown = process.memoryUsage().heapUsed - before;
    if (grown > 0) kept.push(grown / batch);
  }
  kept.sort((a, b) => a - b);
  return kept.length > 0 ? kept[kept.length >> 1] : undefined;
}

let floor = 0;

function bench(name: string, fn: () => unknown, ms = 1500): number {
  for (let i = 0; i < 2000; i++) fn(); // warm up
  let n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(ms) * 1_000_000n;
  let t = t0;
  while (t < end) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
    t = process.hrtime.bigint();
  }
  const ns = Number(t - t0) / n;
  const bytes = bytesPerOp(fn);
  const kb = bytes === undefined ? '' : `${(bytes / 1024).toFixed(1).padStart(7)} KB/op`;
  const ratio = floor > 0 ? `${(ns / floor).toFixed(1).padStart(6)}x` : '';
  console.log(`${name.padEnd(58)} ${ns.toFixed(0).padStart(8)} ns/op ${kb} ${ratio}`);
  return ns;
}

// The call at the menu (after the welcome), and the request that answers it.
const start = advance(flow, undefined, base, opts);
if (start.kind !== 'reply' || !start.state) throw new Error('no start');
const atWelcome: CallState = start.state;
const toMenu: RtRequest = { ...base, command: 'play', command_id: 1, command_result: '0' };
const m = advance(flow, atWelcome, toMenu, opts);
if (m.kind !== 'reply' || !m.state) throw new Error('no menu');
const atMenu = m.state;
const timeout: RtRequest = { ...base, command: 'read', command_id: 2, command_result: 'TIMEOUT' };
const wrong: RtRequest = { ...base, command: 'read', command_id: 2, command_result: '7' };
const zero: RtRequest = { ...base, command: 'read', command_id: 2, command_result: '0' };
const retry: RtRequest = { ...base, command: 'play', command_id: 1, command_result: '0' };

console.log(`flow front-desk@${flow.version}, Node ${process.version}`);
// xstate's floor: a trivial transition of a two-state machine, through the same public ActorLogic call as the engine
const toggle = createMachine({ initial: 'a', states: { a: { on: { T: 'b' } }, b: { on: { T: 'a' } } } });
const toggleActor = createActor(toggle);
const toggleScope = (toggleActor as unknown as { _actorScope: never })._actorScope;
const atA = toggle.getInitialSnapshot(toggleScope);
floor = bench('xstate: trivial transition (the ratios below are to this)', () =>
  toggle.transition(atA, { type: 'T' }, toggleScope),
);
const results: Record<string, number> = {};
results.first = bench('advance: first request (switch, then play)', () => advance(flow, undefined, base, opts));
results.play = bench('advance: play result -> read (constant params)', () => advance(flow, atWelcome, toMenu, opts));
results.timeout = bench('advance: read TIMEOUT -> retry (escalating prompt)', () =>
  advance(flow, atMenu, timeout, opts),
);
results.wrong = bench('advance: read "7" -> default say (template render)', () => advance(flow, atMenu, wrong, opts));
results.zero = bench('advance: read "0" -> handler -> dialout (template)', () => advance(flow, atMenu, zero, opts));
results.replay = bench('advance: retried request (replay)', () => advance(flow, m.state!, retry, opts));
bench('serializeReply (read)', () => serializeReply(m.reply));
