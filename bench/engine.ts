/**
 * Micro-benchmark of the call step: ns per request of `advance` (restore the call's xstate
 * snapshot, one macrostep of the flow's machine, the reply and the state to store), on
 * the front-desk example flow. Also the reply serializer alone.
 *
 *   npx tsx bench/engine.ts
 */
import { readFileSync } from 'node:fs';
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
  console.log(`${name.padEnd(58)} ${ns.toFixed(0).padStart(8)} ns/op  ${(1e9 / ns).toFixed(0).padStart(9)} op/s`);
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
