/**
 * Bounded fuzz of POST /rt bodies: seeded random mutations of valid requests (characters
 * inserted, deleted, replaced; truncation; members repeated, escaped, given hostile
 * values; nesting; BOM and trailing text). Every answer is 200 or 4xx with the error
 * envelope and a catalogue code, never 5xx; a body the parser refuses is answered with
 * its code and writes nothing to the store; a 200 echoes the parser's variables. For a
 * fixed seed the run is deterministic: two runs give the same answers, byte for byte.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseRtRequest } from '../../src/protocol/request.js';
import { codeInfo } from '../../src/errors/catalogue.js';
import { escapeAt, members, post, probeServer, readEcho, text, type Member } from '../helpers/parse.js';
import { int, pick, randomObject, randomString, rng, spell, spellString, type Rand } from '../helpers/spell.js';

const CASES = 2500;
const ALPHABET = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  '0',
  '1',
  '9',
  '-',
  '+',
  '.',
  'e',
  'E',
  'n',
  't',
  'f',
  'u',
  ' ',
  '\n',
  '\u0000',
  '\u001f',
  '\ufeff',
  '\u00a0',
  '\ud800',
  '\udc00',
  'é',
  '😀',
  'x',
];
const HOSTILE = [
  '18446744073709551616',
  '18446744073709551615',
  '1e400',
  '-0',
  '0.0',
  '1E2',
  'NaN',
  'Infinity',
  '-Infinity',
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '['.repeat(40) + ']'.repeat(40),
  '{"a":'.repeat(40) + '1' + '}'.repeat(40),
  '{"__proto__":{"x":1}}',
  '{"a":1,"a":2}',
  '{"a":1,"\\u0061":2}',
  'null',
  'true',
  'false',
  '[]',
  '{}',
  '""',
  '"x"',
  '0',
  '-1',
  '1.5',
  '9007199254740993',
  `"${'x'.repeat(2000)}"`,
  '{"constructor":{"prototype":{}}}',
  '{"toString":1}',
  '"constructor"',
  '"__proto__"',
  '"hasOwnProperty"',
  '{"big":123456789012345678901234567890}',
];
const FIELDS = [
  'app',
  'callid',
  'request_hash',
  'cli_name',
  'cli_number',
  'date_started',
  'number',
  'command',
  'command_id',
  'command_result',
  'command_error',
  'call_status',
  'cdr_field',
  'variables',
];

/** A valid request of one of five calls, at a plausible point of the probe flow, spelled at random. */
function validBody(r: Rand): Member[] {
  const first = r() < 0.3;
  const id = first ? 0 : 1 + int(r, 3);
  const ms = members({
    callid: String(1 + int(r, 5)),
    command: first ? '' : 'read',
    command_id: id,
    command_result: first ? '' : pick(r, ['1', '9', '', 'TIMEOUT']),
    call_status: pick(r, ['UP', 'UP', 'UP', 'INCOMING_CALL', 'HANGUP']),
    app: pick(r, ['A1', 'constructor', '__proto__', 'toString']),
    cli_name: randomString(r, 5),
    variables: r() < 0.4 ? '{}' : spell(r, randomObject(r)),
  });
  return ms.map(([k, v]): Member => (r() < 0.1 ? [escapeAt(k, int(r, k.length)), v] : [k, v]));
}

/** One to three mutations of a valid body. */
function mutate(r: Rand, ms: Member[]): string {
  let m = [...ms];
  let s: string | undefined;
  for (let n = 1 + int(r, 3); n > 0; n--) {
    const kind = int(r, 12);
    if (kind < 5) {
      s ??= text(m);
      const i = int(r, s.length + 1);
      if (kind === 0) s = s.slice(0, i) + pick(r, ALPHABET) + s.slice(i);
      else if (kind === 1) s = s.slice(0, i) + s.slice(i + 1);
      else if (kind === 2) s = s.slice(0, i) + pick(r, ALPHABET) + s.slice(i + 1);
      else if (kind === 3) s = s.slice(0, i);
      else s = s.slice(0, i) + s.slice(int(r, s.length), int(r, s.length)) + s.slice(i);
    } else if (s === undefined) {
      const at = int(r, m.length);
      if (kind === 5) m[at] = [m[at]![0], pick(r, HOSTILE)];
      else if (kind === 6)
        m.splice(int(r, m.length + 1), 0, [
          r() < 0.5 ? m[at]![0] : escapeAt(m[at]![0]),
          pick(r, [m[at]![1], ...HOSTILE]),
        ]);
      else if (kind === 7) m = m.filter((_, i) => i !== at);
      else if (kind === 8)
        m = m.map(([k, v]): Member =>
          k === 'variables' ? [k, `{"a":${'['.repeat(25 + int(r, 20))}${v}${']'.repeat(25 + int(r, 20))}}`] : [k, v],
        );
      else if (kind === 9) m.push([randomString(r, 4).replace(/["\\\u0000-\u001f]/g, ''), pick(r, HOSTILE)]);
      else if (kind === 10)
        m = m.map(([k, v]): Member =>
          k === pick(r, FIELDS) && /^"[^"\\]*"$/.test(v)
            ? [spellString(r, k).slice(1, -1), spellString(r, v.slice(1, -1))]
            : [k, v],
        );
      else m.reverse();
    } else s = kind === 11 ? '\ufeff' + s : s + pick(r, ['x', '{}', ' ', '\n', ',', ']']);
  }
  return s ?? text(m);
}

async function run(seed: number): Promise<{ digest: string; statuses: Record<string, number> }> {
  const { app, store } = await probeServer({ routes: { apps: { A1: 'probe' }, numbers: {}, default: 'probe' } });
  const r = rng(seed);
  const hash = createHash('sha256');
  const statuses: Record<string, number> = {};
  try {
    for (let n = 0; n < CASES; n++) {
      const sent = Buffer.from(mutate(r, validBody(r)), 'utf8');
      // what the server reads: the bytes decoded as UTF-8 (a lone surrogate typed in the test travels as U+FFFD)
      const parsed = parseRtRequest(sent.toString('utf8'));
      const writes = store.writes;
      const res = await post(app, sent, {}, r() < 0.5 ? '/rt/probe' : '/rt');
      const where = `case ${n}: ${sent.toString('utf8').slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
      expect(res.statusCode, where).toBeLessThan(500);
      if (res.statusCode !== 200) {
        const body = JSON.parse(res.body) as { error: { code: string; message: string } };
        expect(Object.keys(body), where).toEqual(['error']);
        expect(Object.keys(body.error), where).toEqual(['code', 'message']);
        expect(codeInfo(body.error.code).http, where).toBe(res.statusCode);
        statuses[`${res.statusCode} ${body.error.code}`] = (statuses[`${res.statusCode} ${body.error.code}`] ?? 0) + 1;
      } else statuses['200'] = (statuses['200'] ?? 0) + 1;
      if (!parsed.ok) {
        expect(
          {
            status: res.statusCode,
            code: JSON.parse(res.body).error.code,
            message: JSON.parse(res.body).error.message,
          },
          where,
        ).toEqual({ status: 400, code: parsed.code, message: parsed.message });
        expect(store.writes, where).toBe(writes);
      } else if (res.statusCode === 200) {
        expect(res.body.endsWith(`,"variables":${parsed.request.variablesRaw}}`), where).toBe(true);
        expect(readEcho(res.body), where).toEqual(parsed.request.variables);
      }
      hash.update(`${res.statusCode} ${res.body}\n`);
    }
  } finally {
    await app.close();
  }
  return { digest: hash.digest('hex'), statuses };
}

describe('fuzz: mutated RT.Request bodies', () => {
  it(
    `${CASES} seeded cases: 200 or 4xx with the envelope, never 5xx; refusals write nothing; the same answers ` +
      `on a second run`,
    async () => {
      const a = await run(8);
      // the fuzz reaches both sides: accepted requests and each kind of refusal
      for (const key of ['200', '400 BAD_JSON', '400 BAD_REQUEST', '400 BODY_TOO_DEEP'])
        expect(a.statuses[key] ?? 0, JSON.stringify(a.statuses)).toBeGreaterThan(50);
      expect(
        Object.keys(a.statuses).every((k) => k === '200' || k.startsWith('4')),
        JSON.stringify(a.statuses),
      ).toBe(true);
      const b = await run(8);
      expect(b).toEqual(a);
    },
    120_000,
  );
});
