/**
 * `npm run bench:parse`: µs per parseRtRequest (src/protocol/request.ts) on the bodies the
 * service sends, next to a bare JSON.parse of the same text (the floor: what any JSON route
 * pays) in the same run. Median of 7 batches after a warm-up; figures are noisy on a shared
 * machine, the ratio to JSON.parse less so.
 */
import { parseRtRequest } from '../src/protocol/request.js';

function body(callid: string, variables: string): string {
  return (
    `{"app":"BENCHAPP","callid":${callid},"request_hash":null,"cli_name":"","cli_number":"+447700900123",` +
    `"date_started":"2026-11-22 10:00:00","number":"+442079460000","command":"read",` +
    `"command_id":2,"command_result":"3","command_error":"","call_status":"UP",` +
    `"cdr_field":"","variables":${variables}}`
  );
}

const CASES: [string, string[]][] = [
  [
    'callid > 2^53, no variables',
    Array.from({ length: 64 }, (_, i) => body(String(10_000_000_000_000_000n + BigInt(i)), '{}')),
  ],
  [
    'callid > 2^53, 3 variables',
    Array.from({ length: 64 }, (_, i) =>
      body(String(10_000_000_000_000_000n + BigInt(i)), '{"crm":"C-0042","lang":"en","tries":2}'),
    ),
  ],
  ['small callid, no variables', Array.from({ length: 64 }, (_, i) => body(String(4242 + i), '{}'))],
  [
    'big number in variables (lossless)',
    Array.from({ length: 64 }, (_, i) =>
      body(String(10_000_000_000_000_000n + BigInt(i)), '{"crm_id":12345678901234567890}'),
    ),
  ],
];

function time(fn: (s: string) => unknown, bodies: string[], n: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(bodies[i & 63]!);
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

function measure(fn: (s: string) => unknown, bodies: string[]): number {
  time(fn, bodies, 20_000); // warm-up
  const batches = Array.from({ length: 7 }, () => time(fn, bodies, 20_000)).sort((a, b) => a - b);
  return batches[3]!;
}

for (const b of CASES[0]![1]) if (!parseRtRequest(b).ok) throw new Error('bench body refused');
console.log('parseRtRequest, µs per body (median of 7 batches of 20 000)');
for (const [name, bodies] of CASES) {
  const ours = measure(parseRtRequest, bodies);
  const json = measure(JSON.parse, bodies);
  console.log(
    `  ${name.padEnd(36)} ${ours.toFixed(2).padStart(6)} µs   JSON.parse ${json.toFixed(2).padStart(5)} µs  ` +
      ` ${(ours / json).toFixed(1)}x`,
  );
}
