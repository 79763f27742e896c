/**
 * Property: an RT.Request written in different ways (member order at every level, key
 * and string escapes, whitespace, number spellings) is one request: the parser gives the
 * same result, and the server the same reply bytes and the same stored state. And what
 * the engine read, what it stored and what the reply echoes agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseRtRequest } from '../../src/protocol/request.js';
import { members, post, probeServer, readEcho, text, type WatchedStore } from '../helpers/parse.js';
import {
  randomObject,
  randomString,
  rng,
  shuffle,
  spell,
  spellString,
  ws,
  type J,
  type Rand,
} from '../helpers/spell.js';

interface Req {
  strings: Record<string, string>;
  request_hash: string | null;
  variables: J;
}

const STRING_FIELDS = [
  'app',
  'cli_name',
  'cli_number',
  'date_started',
  'number',
  'command_result',
  'command_error',
  'cdr_field',
] as const;

function randomRequest(r: Rand): Req {
  const strings: Record<string, string> = {};
  for (const f of STRING_FIELDS) strings[f] = randomString(r, 6);
  strings.command_error = '';
  return { strings, request_hash: r() < 0.5 ? null : randomString(r, 6), variables: randomObject(r) };
}

/** The next request of call 4242 (it answers the probe flow's read, command 1), spelled at random. */
function spellRequest(r: Rand, q: Req): string {
  const m: [string, string][] = [
    ['callid', '4242'],
    ['command', spellString(r, 'read')],
    ['command_id', '1'],
    ['call_status', spellString(r, 'UP')],
    ['request_hash', q.request_hash === null ? 'null' : spellString(r, q.request_hash)],
    ['variables', spell(r, q.variables)],
    ...STRING_FIELDS.map((f): [string, string] => [f, spellString(r, q.strings[f]!)]),
  ];
  return (
    ws(r) +
    '{' +
    ws(r) +
    shuffle(r, m)
      .map(([k, v]) => spellString(r, k) + ws(r) + ':' + ws(r) + v)
      .join(ws(r) + ',' + ws(r)) +
    ws(r) +
    '}' +
    ws(r)
  );
}

describe('parser: spellings of one request', () => {
  it('300 random requests, 6 spellings each: one RtRequest (variables in one key order), one echoed text', () => {
    const r = rng(20261122);
    for (let n = 0; n < 300; n++) {
      const q = randomRequest(r);
      const first = parseRtRequest(spellRequest(r, q));
      if (!first.ok) throw new Error(first.message);
      for (let k = 0; k < 5; k++) {
        const body = spellRequest(r, q);
        const other = parseRtRequest(body);
        expect(other, body).toEqual(first);
        if (other.ok) expect(JSON.stringify(other.request.variables)).toBe(JSON.stringify(first.request.variables));
      }
      // the echo is a fixed point: read again, the same data and text
      const again = parseRtRequest(text(members({ variables: first.request.variablesRaw })));
      expect(again.ok && again.request.variablesRaw).toBe(first.request.variablesRaw);
      expect(again.ok && again.request.variables).toEqual(first.request.variables);
      // another JSON reader reads the echo as the data the engine got
      expect(readEcho(`{"variables":${first.request.variablesRaw}}`)).toEqual(first.request.variables);
    }
  });
});

describe('server: spellings of one request', () => {
  let app: FastifyInstance;
  let store: WatchedStore;
  let snapshot: string;

  beforeAll(async () => {
    ({ app, store } = await probeServer());
    expect((await post(app, text(members()))).statusCode).toBe(200);
    snapshot = (await store.get('4242'))!;
  });
  afterAll(async () => {
    await app.close();
  });

  async function effect(body: string) {
    await store.set('4242', snapshot, 60_000);
    const res = await post(app, body);
    return { status: res.statusCode, body: res.body, state: await store.get('4242') };
  }

  it(
    '40 random requests, 4 spellings each: the same reply ' + 'bytes and stored state; engine, state and echo agree',
    async () => {
      const r = rng(42);
      for (let n = 0; n < 40; n++) {
        const q = randomRequest(r);
        const body = spellRequest(r, q);
        const want = await effect(body);
        expect(want.status, want.body).toBe(200);
        const parsed = parseRtRequest(body);
        if (!parsed.ok) throw new Error(parsed.message);
        // the reply echoes the parser's canonical text; the state keeps the data the engine read
        expect(want.body.endsWith(`,"variables":${parsed.request.variablesRaw}}`)).toBe(true);
        const state = JSON.parse(want.state!) as { vars: { variables: unknown; seen: string } };
        // (the CEL copy: cel-js refuses a map with its own "constructor" key, the set then fails; a flow-evaluation
        // matter)
        if (!Object.hasOwn(parsed.request.variables, 'constructor'))
          expect(state.vars.variables).toEqual(parsed.request.variables);
        expect(state.vars.seen).toBe(JSON.stringify(parsed.request.variables));
        expect(readEcho(want.body)).toEqual(parsed.request.variables);
        for (let k = 0; k < 3; k++) {
          const other = spellRequest(r, q);
          expect(await effect(other), other).toEqual(want);
        }
      }
    },
  );

  it('a sample of what is compared: escapes, order and number spellings differ, the reply does not', async () => {
    const r = rng(7);
    const q: Req = {
      strings: { ...Object.fromEntries(STRING_FIELDS.map((f) => [f, 'x'])), cli_name: 'Zoë "Z" 😀' },
      request_hash: null,
      variables: {
        t: 'obj',
        members: [
          ['b', { t: 'num', neg: false, d: '25', f: 1 }],
          ['a', { t: 'str', s: 'é/\n' }],
        ],
      },
    };
    const bodies = [spellRequest(r, q), spellRequest(r, q), spellRequest(r, q)];
    expect(new Set(bodies).size).toBe(3);
    const replies = await Promise.all(bodies.map(async (b) => (await effect(b)).body));
    expect(replies[0]!.endsWith(',"variables":{"a":"é/\\n","b":2.5}}')).toBe(true);
    expect(new Set(replies).size).toBe(1);
  });
});
