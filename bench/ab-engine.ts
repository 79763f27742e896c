/**
 * A/B micro-benchmark of `advance` on front-desk between two source trees in one process,
 * interleaved (A, B, A, B...) so that a loaded machine affects both alike: the minimum
 * ns/op of each case over many short rounds (the least disturbed ones), the order
 * alternating.
 *
 *   npx tsx bench/ab-engine.ts /path/to/other/checkout
 */
import { readFileSync } from 'node:fs';

type Mod = { advance: any; checkFlow: any; compileFlow: any };
async function load(root: string): Promise<Mod> {
  const { advance } = await import(`${root}/src/engine/advance.ts`);
  const { checkFlow } = await import(`${root}/src/flow/check.ts`);
  const { compileFlow } = await import(`${root}/src/engine/compile.ts`);
  return { advance, checkFlow, compileFlow };
}
const here = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const other = process.argv[2]!;
const base = {
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
const opts = { now: 0, unknownCall: 'restart' as const };

function cases(m: Mod, root: string) {
  const text = readFileSync(`${root}/flows/front-desk.yaml`, 'utf8');
  const flow = m.compileFlow(m.checkFlow(text, 'flows/front-desk.yaml').model, text);
  const atWelcome = m.advance(flow, undefined, base, opts).state;
  const toMenu = { ...base, command: 'play', command_id: 1, command_result: '0' };
  const atMenu = m.advance(flow, atWelcome, toMenu, opts).state;
  const r = (res: string) => ({ ...base, command: 'read', command_id: 2, command_result: res });
  return {
    first: () => m.advance(flow, undefined, base, opts),
    play: () => m.advance(flow, atWelcome, toMenu, opts),
    timeout: () => m.advance(flow, atMenu, r('TIMEOUT'), opts),
    wrong: () => m.advance(flow, atMenu, r('7'), opts),
    zero: () => m.advance(flow, atMenu, r('0'), opts),
  };
}
function ns(fn: () => unknown, n = 200): number {
  for (let i = 0; i < 20; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / n;
}
const A = cases(await load(other), other);
const B = cases(await load(here), here);
const best: Record<string, [number, number]> = {};
for (let round = 0; round < 200; round++) {
  for (const k of Object.keys(A) as (keyof typeof A)[]) {
    const ab = round % 2 === 0;
    const a = ab ? ns(A[k]) : 0;
    const b = ns(B[k]);
    const a2 = ab ? a : ns(A[k]);
    const cur = best[k] ?? [Infinity, Infinity];
    best[k] = [Math.min(cur[0], ab ? a : a2), Math.min(cur[1], b)];
  }
}
for (const [k, [a, b]] of Object.entries(best))
  console.log(
    `${k.padEnd(8)} before ${a.toFixed(0).padStart(7)} ns/op   after ${b.toFixed(0).padStart(7)} ns/op  ` +
      ` ${((b / a - 1) * 100).toFixed(1)}%`,
  );
