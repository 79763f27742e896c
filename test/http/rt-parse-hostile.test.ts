/**
 * Hostile RT.Request bodies against POST /rt/probe, each with its exact answer. A live
 * call (4242) waits at the probe flow's `read`; every body below is its next request,
 * altered. A refused body is answered with the error envelope and writes nothing to the
 * store; an accepted one must do exactly what its plain spelling does (same reply bytes,
 * same stored state).
 */
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  change,
  escapeAt,
  members,
  post,
  probeServer,
  text,
  type Member,
  type WatchedStore,
} from '../helpers/parse.js';
import { RT_REQUEST_FIELDS } from '../../src/protocol/request.js';

const VARS = '{"crm":"C-1","n":[1,2.5,"x"]}';
const NEXT = members({ command: 'read', command_id: 1, command_result: '5', variables: VARS });
const BASE = text(NEXT);

let app: FastifyInstance;
let store: WatchedStore;
let snapshot: string;

beforeAll(async () => {
  ({ app, store } = await probeServer());
  const first = await post(app, text(members()));
  expect(first.statusCode, first.body).toBe(200);
  snapshot = (await store.get('4242'))!;
  expect(snapshot).toContain('"s":"menu"');
});

afterAll(async () => {
  await app.close();
});

/** Posts `body` to call 4242 as it was after its first request: the answer, the state after it and the store writes. */
async function effect(body: string | Buffer, headers: Record<string, string> = {}) {
  await store.set('4242', snapshot, 60_000);
  store.writes = 0;
  const res = await post(app, body, headers);
  return {
    status: res.statusCode,
    body: res.body,
    state: await store.get('4242'),
    writes: store.writes,
    size: await store.size(),
  };
}

/** The refusal expected: status, code, message; and the call as it was, the store untouched. */
async function expectRefused(
  body: string | Buffer,
  status: number,
  code: string,
  message: string | RegExp,
  headers: Record<string, string> = {},
) {
  const e = await effect(body, headers);
  expect({ status: e.status, code: JSON.parse(e.body).error.code }, e.body).toEqual({ status, code });
  expect(Object.keys(JSON.parse(e.body))).toEqual(['error']);
  expect(Object.keys(JSON.parse(e.body).error)).toEqual(['code', 'message']);
  if (typeof message === 'string') expect(JSON.parse(e.body).error.message).toBe(message);
  else expect(JSON.parse(e.body).error.message).toMatch(message);
  expect({ writes: e.writes, size: e.size, same: e.state === snapshot }).toEqual({ writes: 0, size: 1, same: true });
}

/** Accepted, with exactly the effect of `plain`: reply bytes and stored state. */
async function expectSameAs(body: string | Buffer, plain: string) {
  const want = await effect(plain);
  expect(want.status, want.body).toBe(200);
  const got = await effect(body);
  expect(got).toEqual(want);
}

const dup = (key: string, at: number) =>
  `the key ${JSON.stringify(key)} appears twice in one object (again at offset ${at}): each key may appear once`;
const syntax = (shown: string, at: number, wanted: string) =>
  `the body is not valid JSON: ${shown} at offset ${at} where ${wanted} was expected`;
const withVars = (vars: string) => text(change(NEXT, 'variables', ([k]) => [k, vars]));
const withValue = (key: string, raw: string) => text(change(NEXT, key, ([k]) => [k, raw]));
const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

/** Where the first object or array deeper than `max` opens (strings skipped): an oracle of the expected offset. */
function deeperThan(body: string, max: number): number {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"') {
      for (i++; body[i] !== '"'; i++) if (body[i] === '\\') i++;
    } else if (c === '{' || c === '[') {
      if (++depth > max) return i;
    } else if (c === '}' || c === ']') depth--;
  }
  return -1;
}

describe('escaped key names', () => {
  it.each(RT_REQUEST_FIELDS.map((f) => [f]))('"%s" with an escaped letter is the same field', async (f) => {
    await expectSameAs(text(change(NEXT, f, ([k, v]) => [escapeAt(k, 1), v])), BASE);
  });

  it.each(RT_REQUEST_FIELDS.map((f) => [f]))(
    '"%s" and its escaped spelling together: 400, whichever comes second',
    async (f) => {
      const value = NEXT.find((m) => m[0] === f)![1];
      const body = text([...NEXT, [escapeAt(f, 0), value]]);
      await expectRefused(body, 400, 'BAD_REQUEST', dup(f, body.lastIndexOf(`"${escapeAt(f, 0)}"`)));
    },
  );

  it('"v\\u0061riables" before "variables": 400 too (the reply and the engine cannot disagree)', async () => {
    const body = text([['v\\u0061riables', '{"evil":1}'], ...NEXT]);
    await expectRefused(body, 400, 'BAD_REQUEST', dup('variables', body.indexOf('"variables"')));
  });
});

describe('duplicate keys are refused everywhere', () => {
  it('the same field twice with the same value', async () => {
    const body = text([...NEXT, ['command_id', '1']]);
    await expectRefused(body, 400, 'BAD_REQUEST', dup('command_id', body.lastIndexOf('"command_id"')));
  });

  it.each([
    ['{"a":1,"a":1}', 'a', 7],
    ['{"a":1,"\\u0061":2}', 'a', 7],
    ['{"x":{"b":1,"b":2}}', 'b', 12],
    ['{"x":[{"k":1},{"k":1,"k":2}]}', 'k', 21],
  ])('inside variables: %s', async (vars, key, at) => {
    const body = withVars(vars);
    await expectRefused(body, 400, 'BAD_REQUEST', dup(key, body.indexOf(vars) + at));
  });

  it('an unknown top-level key is read and ignored, but not twice', async () => {
    await expectSameAs(text([...NEXT, ['extra', '{"a":[1,2]}']]), BASE);
    const body = text([...NEXT, ['extra', '1'], ['extr\\u0061', '2']]);
    await expectRefused(body, 400, 'BAD_REQUEST', dup('extra', body.lastIndexOf('"extr')));
  });
});

describe('__proto__ is never a key', () => {
  it.each(['{"__proto__":{"crm":"x"}}', '{"a":{"__proto__":1}}', '{"__pr\\u006fto__":1}'])(
    'in variables: %s',
    async (vars) => {
      const body = withVars(vars);
      await expectRefused(
        body,
        400,
        'BAD_REQUEST',
        `the key "__proto__" at offset ${body.indexOf('"__pr', body.indexOf('"variables"'))} is not allowed`,
      );
    },
  );

  it('at the top level', async () => {
    const body = text([['__proto__', '{"variables":{}}'], ...NEXT]);
    await expectRefused(body, 400, 'BAD_REQUEST', 'the key "__proto__" at offset 1 is not allowed');
  });

  it('constructor and prototype are ordinary keys', async () => {
    await expectSameAs(
      withVars('{"prototype":2,"constructor":{"prototype":1}}'),
      withVars('{"constructor":{"prototype":1},"prototype":2}'),
    );
  });
});

describe('numbers and other values where objects and strings are expected', () => {
  it.each([
    [
      'variables',
      '18446744073709551616',
      'field variables must be a JSON object ({} when empty), got number 18446744073709551616',
    ],
    ['variables', '1e400', 'field variables must be a JSON object ({} when empty), got number 1e400'],
    ['variables', '[]', 'field variables must be a JSON object ({} when empty), got an array'],
    ['variables', '"{}"', 'field variables must be a JSON object ({} when empty), got "{}"'],
    ['variables', 'null', 'field variables must be a JSON object ({} when empty), got null'],
    ['variables', 'true', 'field variables must be a JSON object ({} when empty), got boolean true'],
    ['app', '18446744073709551616', 'field app must be a string, got number 18446744073709551616'],
    ['cli_name', '{"a":1}', 'field cli_name must be a string, got an object'],
    ['request_hash', '1e400', 'field request_hash must be a string or null, got number 1e400'],
    [
      'callid',
      '18446744073709551616',
      'field callid must be an unsigned 64-bit integer, got number 18446744073709551616',
    ],
    ['callid', '1e400', 'field callid must be an unsigned 64-bit integer written with digits only, got 1e400'],
    ['callid', '4242.0', 'field callid must be an unsigned 64-bit integer written with digits only, got 4242.0'],
    ['callid', '-4242', 'field callid must be an unsigned 64-bit integer, got number -4242'],
    ['callid', '"4242"', 'field callid must be an unsigned 64-bit integer, got "4242"'],
    [
      'command_id',
      '18446744073709551616',
      'field command_id must be a non-negative integer, got number 18446744073709551616',
    ],
    ['command_id', '9007199254740993', 'field command_id must be a non-negative integer, got number 9007199254740993'],
    ['command_id', '1E0', 'field command_id must be a non-negative integer written with digits only, got 1E0'],
    ['command_id', 'null', 'field command_id must be a non-negative integer, got null'],
  ])('%s: %s', async (field, raw, message) => {
    await expectRefused(withValue(field, raw), 400, 'BAD_REQUEST', message);
  });

  it('a callid of 2^64-1 is kept digit for digit', async () => {
    const res = await post(app, text(members({ callid: '18446744073709551615' })));
    expect(res.statusCode, res.body).toBe(200);
    expect(await store.get('18446744073709551615')).toContain('"s":"menu"');
    await store.delete('18446744073709551615');
  });

  it('numbers inside variables: one value and one spelling, every digit kept', async () => {
    await expectSameAs(
      withVars('{"big":123456789012345678901234567890,"f":1.0,"e":1E2,"z":-0,"x":1e400}'),
      withVars('{"big":123456789012345678901234567890,"e":100,"f":1,"x":1e+400,"z":0}'),
    );
  });
});

describe('deep nesting: 400 BODY_TOO_DEEP, never a stack overflow or a 500', () => {
  const tooDeep = (at: number) =>
    `the body nests objects and arrays more than 32 deep (at offset ${at}): see server.body_depth`;

  it('variables up to 32 deep (the body is 1, variables 2) are accepted', async () => {
    await expectSameAs(withVars(`{"a":${nested(30)}}`), withVars(`{"a": ${nested(30)} }`));
  });

  it.each([
    ['in variables', (d: number) => withVars(`{"a":${nested(d)}}`), 30],
    [
      'in variables, with a big number',
      (d: number) => withVars(`{"a":${nested(d, '123456789012345678901234567890')}}`),
      30,
    ],
    ['in variables, objects', (d: number) => withVars('{"a":'.repeat(d) + '1' + '}'.repeat(d)), 31],
    ['in a string field', (d: number) => withValue('app', nested(d)), 31],
    ['in an unknown member', (d: number) => text([...NEXT, ['extra', nested(d)]]), 31],
  ])('%s', async (_name, make, fits) => {
    expect((await effect(make(fits))).status).toBe(make(fits).includes('"app":[') ? 400 : 200);
    for (const depth of [fits + 1, 10_000]) {
      const body = make(depth);
      await expectRefused(body, 400, 'BODY_TOO_DEEP', tooDeep(deeperThan(body, 32)));
    }
  });

  it('the whole body nested, even unterminated', async () => {
    await expectRefused('['.repeat(60_000), 400, 'BODY_TOO_DEEP', tooDeep(32));
    await expectRefused('{"a":'.repeat(12_000), 400, 'BODY_TOO_DEEP', tooDeep(32 * 5));
  });
});

describe('strings: lone surrogates, escapes, raw bytes', () => {
  const lone = (at: number) =>
    `the string at offset ${at} holds a lone surrogate (a UTF-16 half not in a pair): strings must be valid Unicode`;

  it.each(['"\\ud800"', '"\\udc00"', '"a\\ude00\\ud83d"', '"\\ud83d\\u0041"'])('cli_name %s: 400', async (raw) => {
    const body = withValue('cli_name', raw);
    await expectRefused(body, 400, 'BAD_REQUEST', lone(body.indexOf(raw)));
  });

  it('a lone surrogate in a key of variables: 400', async () => {
    const body = withVars('{"\\udbff":1}');
    await expectRefused(body, 400, 'BAD_REQUEST', lone(body.indexOf('"\\udbff"')));
  });

  it('an escaped pair is the character', async () => {
    await expectSameAs(withValue('cli_name', '"\\ud83d\\ude00 \\u00e9\\/"'), withValue('cli_name', '"😀 é/"'));
    await expectSameAs(withVars('{"s":"\\ud83d\\ude00\\t\\u0041"}'), withVars('{"s":"😀\\tA"}'));
  });

  it(
    'bytes that are not UTF-8 (an encoded surrogate) reach the ' + 'engine as U+FFFD, as the transport decodes them',
    async () => {
      const [before, after] = withValue('cli_name', '"@"').split('@') as [string, string];
      const body = Buffer.concat([Buffer.from(before), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(after)]);
      await expectSameAs(body, withValue('cli_name', '"\\ufffd\\ufffd\\ufffd"'));
    },
  );

  it('a control character must be escaped', async () => {
    const body = withValue('cli_name', '"a\tb"');
    await expectRefused(
      body,
      400,
      'BAD_JSON',
      `the body is not valid JSON: U+0009 at offset ${body.indexOf('\t')} where a character of a string ` +
        `(control characters must be escaped) was expected`,
    );
  });

  it('huge strings within the body limit are read (and echoed) whole', async () => {
    await expectSameAs(
      withValue('cli_name', JSON.stringify('\\u0041'.repeat(9000)).replaceAll('\\\\', '\\')),
      withValue('cli_name', JSON.stringify('A'.repeat(9000))),
    );
    const big = '{"note":"' + 'x'.repeat(60_000) + '"}';
    const e = await effect(withVars(big));
    expect(e.status, e.body.slice(0, 200)).toBe(200);
    expect(e.body.endsWith(`"variables":${big}}`)).toBe(true);
  });
});

describe('not JSON', () => {
  const end = BASE.length;
  it.each([
    [
      'a byte order mark',
      '\ufeff' + BASE,
      'the body is not valid JSON: it starts with a byte order mark (U+FEFF), which JSON sent over a network ' +
        'must not have',
    ],
    ['trailing garbage', BASE + 'x', syntax("'x'", end, 'the end of the body')],
    ['a second object', BASE + '{}', syntax("'{'", end, 'the end of the body')],
    ['a trailing NUL', BASE + '\u0000', syntax('U+0000', end, 'the end of the body')],
    ['NaN', withVars('{"a":NaN}'), syntax("'N'", withVars('{"a":NaN}').indexOf('NaN'), 'a JSON value')],
    [
      'Infinity',
      withVars('{"a":Infinity}'),
      syntax("'I'", withVars('{"a":Infinity}').indexOf('Infinity'), 'a JSON value'),
    ],
    [
      '-Infinity',
      withVars('{"a":-Infinity}'),
      syntax("'I'", withVars('{"a":-Infinity}').indexOf('Infinity'), 'a digit'),
    ],
    [
      'command_id NaN',
      withValue('command_id', 'NaN'),
      syntax("'N'", withValue('command_id', 'NaN').indexOf('NaN'), 'a JSON value'),
    ],
    [
      'a leading zero',
      withValue('command_id', '01'),
      syntax("'1'", withValue('command_id', '01').indexOf('01') + 1, "',' or '}'"),
    ],
    ['a plus sign', withVars('{"a":+1}'), syntax("'+'", withVars('{"a":+1}').indexOf('+1}'), 'a JSON value')],
    ['a bare fraction', withVars('{"a":.5}'), syntax("'.'", withVars('{"a":.5}').indexOf('.5'), 'a JSON value')],
    [
      'a dot and no digits',
      withVars('{"a":1.}'),
      syntax("'}'", withVars('{"a":1.}').indexOf('1.') + 2, 'a digit after the decimal point'),
    ],
    ['hex', withVars('{"a":0x10}'), syntax("'x'", withVars('{"a":0x10}').indexOf('0x') + 1, "',' or '}'")],
    ['single quotes', withVars("{'a':1}"), syntax("'''", withVars("{'a':1}").indexOf("'a'"), 'a key (a string)')],
    [
      'a trailing comma',
      withVars('{"a":1,}'),
      syntax("'}'", withVars('{"a":1,}').indexOf(',}') + 1, 'a key (a string)'),
    ],
    ['a comment', withVars('{"a":1/*x*/}'), syntax("'/'", withVars('{"a":1/*x*/}').indexOf('/*'), "',' or '}'")],
    [
      'a bad escape',
      withValue('cli_name', '"\\x41"'),
      syntax(
        "'\\'",
        withValue('cli_name', '"\\x41"').indexOf('\\x'),
        'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and 4 hex digits)',
      ),
    ],
    [
      'a short \\u escape',
      withValue('cli_name', '"\\u12"'),
      syntax(
        "'\\'",
        withValue('cli_name', '"\\u12"').indexOf('\\u'),
        'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and 4 hex digits)',
      ),
    ],
    [
      'no-break space as whitespace',
      BASE.replace(',"app"', ',\u00a0"app"').replace('{"app"', '{\u00a0"app"'),
      syntax('U+00A0', 1, 'a key (a string)'),
    ],
    [
      'an unterminated string',
      BASE.slice(0, BASE.indexOf('"Ada') + 3),
      'the body is not valid JSON: it ends where the end of a string (a quote) was expected',
    ],
    ['an unterminated object', BASE.slice(0, -1), "the body is not valid JSON: it ends where ',' or '}' was expected"],
    ['an empty body', '', 'the body is not valid JSON: it ends where a JSON value was expected'],
    ['whitespace only', ' \n', 'the body is not valid JSON: it ends where a JSON value was expected'],
  ])('%s: 400 BAD_JSON', async (_name, body, message) => {
    await expectRefused(body, 400, 'BAD_JSON', message);
  });

  it('a byte order mark as bytes (EF BB BF) is refused too', async () => {
    await expectRefused(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BASE)]),
      400,
      'BAD_JSON',
      /byte order mark/,
    );
  });

  it('JSON whitespace around and inside is fine', async () => {
    await expectSameAs(' \r\n\t' + BASE.replaceAll(',"', ' ,\n "').replaceAll('":', '" :\t') + '\n ', BASE);
  });

  it.each(['[]', '"x"', '1', 'null', 'true', '[' + BASE + ']'])('%s is JSON but not an RT.Request', async (body) => {
    await expectRefused(body, 400, 'BAD_REQUEST', 'the body must be a JSON object (an RT.Request)');
  });
});

describe('Content-Encoding', () => {
  it.each([
    ['gzip', gzipSync(BASE)],
    ['deflate', deflateSync(BASE)],
    ['br', brotliCompressSync(BASE)],
    ['gzip', Buffer.from(BASE)],
    ['x-anything', Buffer.from(BASE)],
    ['gzip, identity', Buffer.from(BASE)],
    ['', Buffer.from(BASE)],
  ])('%s: 415 UNSUPPORTED_ENCODING, the body unread', async (encoding, body) => {
    await expectRefused(
      body,
      415,
      'UNSUPPORTED_ENCODING',
      `Content-Encoding ${JSON.stringify(encoding)} is not supported: send the body uncompressed (identity)`,
      { 'content-encoding': encoding },
    );
  });

  it.each(['identity', ' Identity '])('%s is the body as sent', async (encoding) => {
    const want = await effect(BASE);
    expect(await effect(BASE, { 'content-encoding': encoding })).toEqual(want);
  });
});

describe('members in any order', () => {
  it('the reply and the state do not depend on the order of members', async () => {
    const reordered: Member[] = [...NEXT].reverse();
    await expectSameAs(text(reordered), BASE);
  });
});
