/**
 * Hostile inputs that used to crash or wedge the emulator: JSON nested deep enough to
 * overflow the stack in what follows the parse, caller scripts whose YAML nesting killed
 * the process (a V8 fatal error), and customer-server replies too deep or too large.
 * After each, the emulator still answers.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonTooDeep } from '../../src/emulator/json-depth.js';
import { MAX_REPLY_BYTES } from '../../src/emulator/driver/wire.js';
import { AUTH, cmd, fakeServer, rawHttp, startEmulator, type Running } from './helpers.js';

let e: Running;
beforeAll(async () => {
  e = await startEmulator();
});
afterAll(async () => e.close());

const nest = (n: number, inner = '1') => '['.repeat(n) + inner + ']'.repeat(n);
const DEEP = 100_000;

async function stillAnswers() {
  expect((await e.req('/emulator/health')).json).toMatchObject({ status: 'ok' });
}

describe('jsonTooDeep', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(jsonTooDeep(nest(64))).toBe(false);
    expect(jsonTooDeep(nest(65))).toBe(true);
    expect(jsonTooDeep('{"a":' + nest(63) + '}')).toBe(false);
    expect(jsonTooDeep('{"a":' + nest(64) + '}')).toBe(true);
    expect(jsonTooDeep(JSON.stringify({ text: '['.repeat(1000) + '"\\{' }))).toBe(false);
    expect(jsonTooDeep(JSON.stringify(['\\', nest(63)]))).toBe(false);
  });
});

describe('JSON nested too deep', () => {
  it('SMS REST: 400 code 10, nothing stored', async () => {
    const r = await e.req('/rest/v1.1/sms', {
      raw: `{"from":"Acme","to":"+33612345678","body":"x","options":{"user_data":${nest(DEEP)}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect([r.status, r.json]).toEqual([
      400,
      {
        status: 'error',
        data: { code: 10, message: 'the body is nested deeper than 64 levels of arrays and objects' },
      },
    ]);
    expect(e.emu.ctx.store.sms.size).toBe(0);
  });

  it('JSON-RPC: -32600 with HTTP 200 (apps.get with deep params was an internal error, -32603)', async () => {
    for (const params of [`[${nest(DEEP)}]`, `[${nest(5000)}]`]) {
      const r = await e.req('/json-rpc/v1.1/', {
        raw: `{"jsonrpc":"2.0","id":1,"method":"apps.get","params":${params}}`,
        headers: { 'content-type': 'application/json-rpc; charset=utf-8' },
      });
      expect([r.status, r.json]).toEqual([
        200,
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: 'invalid request: the body is nested deeper than 64 levels of arrays and objects',
          },
        },
      ]);
    }
    await stillAnswers();
  });

  it('control API: 400 BAD_REQUEST (a deep caller object was an internal error)', async () => {
    const r = await e.req('/emulator/calls', {
      raw: `{"url":"http://127.0.0.1:9/rt","caller":{"call":{"variables":{"x":${nest(DEEP)}}}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect([r.status, r.json]).toEqual([
      400,
      { error: { code: 'BAD_REQUEST', message: 'the body is nested deeper than 64 levels of arrays and objects' } },
    ]);
  });
});

describe('caller scripts nested too deep', () => {
  // 5,000 levels of `- ` (10 KB) killed the process: V8 fatal error in the YAML composer's recursion.
  it.each([
    ['block sequences', '- '.repeat(5000) + 'x', '1:129'],
    ['flow sequences', 'call:\n  variables:\n    x: ' + nest(5000, ''), '3:69'],
    ['indented maps', Array.from({ length: 300 }, (_, i) => ' '.repeat(i) + 'a:').join('\n') + ' 1', '65:65'],
  ])(
    '%s: 400 BAD_CALLER at the first level too deep, in POST /emulator/calls and PUT /emulator/callers',
    async (_n, text, at) => {
      const message = `caller script:${at} values are nested deeper than 64 levels`;
      const r = await e.req('/emulator/calls', { body: { url: 'http://127.0.0.1:9/rt', caller_text: text } });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({
        code: 'BAD_CALLER',
        errors: [{ file: 'caller script', path: '', message: 'values are nested deeper than 64 levels' }],
      });
      expect(r.json.error.message.split('\n')[0]).toBe(message);
      const put = await e.req('/emulator/callers/+447700900456', { method: 'PUT', body: { caller_text: text } });
      expect(put.status).toBe(400);
      expect(put.json.error.message.split('\n')[0]).toBe(message);
      expect(e.emu.ctx.store.callers.size).toBe(0);
      await stillAnswers();
    },
  );

  it('aliases that nest anchors inside anchors: refused before they are expanded (was a stack overflow)', async () => {
    let text = 'call:\n  variables:\n    a0: &a0 ' + nest(60, '') + '\n';
    for (let i = 1; i < 400; i++) text += `    a${i}: &a${i} ${nest(60, `*a${i - 1}`)}\n`;
    const r = await e.req('/emulator/calls', { body: { url: 'http://127.0.0.1:9/rt', caller_text: text } });
    expect(r.status).toBe(400);
    expect(r.json.error.errors).toEqual([
      expect.objectContaining({
        path: '',
        message: 'values are nested deeper than 64 levels once aliases are expanded',
      }),
    ]);
  });

  it('aliases that multiply (a billion laughs): refused', async () => {
    let text = 'call:\n  variables:\n    l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 10; i++)
      text += `    l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(', ')}]\n`;
    const r = await e.req('/emulator/calls', { body: { url: 'http://127.0.0.1:9/rt', caller_text: text } });
    expect(r.status).toBe(400);
    expect(r.json.error.errors).toEqual([
      expect.objectContaining({ message: 'the script is too big once its aliases are expanded (over 100,000 values)' }),
    ]);
  });

  it('a script at the limit still loads', async () => {
    const server = await fakeServer(() => ({ body: cmd('hangup', 1) }));
    try {
      const r = await e.req('/emulator/calls', {
        body: { url: server.url, caller_text: `call:\n  variables:\n    x: ${nest(60)}\n` },
      });
      expect(r.status).toBe(200);
      expect(r.json.ended_by).toBe('flow');
    } finally {
      await server.close();
    }
  });
});

describe('customer server replies', () => {
  it(
    'nested too deep: a TOO_DEEP violation (variables 3,000 ' + 'deep were an internal error of the emulator)',
    async () => {
      for (const variables of [`{"x":${nest(3000)}}`, `{"x":${nest(DEEP)}}`]) {
        const server = await fakeServer((_r, n) => ({
          body:
            n === 1
              ? `{"command":"play","command_id":1,"params":{"media_id":"1"},"variables":${variables}}`
              : cmd('hangup', 2),
        }));
        try {
          const t = await e.call({ url: server.url });
          expect(t.violations).toEqual([
            {
              request: 1,
              code: 'TOO_DEEP',
              field: 'body',
              message: 'the reply nests arrays and objects deeper than 64 levels',
            },
          ]);
          expect(t.warnings).toEqual([]);
          expect([t.ended_by, server.seen.at(-1)!.json.call_status]).toEqual(['emulator', 'HANGUP']);
        } finally {
          await server.close();
        }
      }
    },
  );

  it('over the size limit, or without end: a TOO_LARGE violation, the rest is not read', async () => {
    let streamed = 0;
    let request = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        request++;
        res.writeHead(200, { 'content-type': 'application/json' });
        if (request === 3) return res.end(JSON.stringify(cmd('hangup', 1)));
        // request 1: one body just over the limit; request 2 (the terminal one of call 1) and 4: a stream without end
        if (request === 1)
          return res.end(
            JSON.stringify({
              command: 'play',
              command_id: 1,
              params: { media_id: 'x'.repeat(MAX_REPLY_BYTES) },
              variables: {},
            }),
          );
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const more = () => {
          while (!res.destroyed && streamed < 64 * MAX_REPLY_BYTES) {
            streamed += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
        };
        res.write('{"command":"play","command_id":1,"params":{"media_id":"');
        more();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/rt`;
    try {
      const t = await e.call({ url });
      expect(t.violations).toEqual([
        {
          request: 1,
          code: 'TOO_LARGE',
          field: 'body',
          message: `the reply (HTTP 200) is over ${MAX_REPLY_BYTES} bytes; the emulator reads no more`,
        },
      ]);
      expect(t.warnings).toEqual([
        { request: 2, code: 'TERMINAL_REPLY', message: 'the reply to the terminal request is too large (not read)' },
      ]);
      const u = await e.call({ url, reply_timeout_ms: 60000 });
      expect(u.violations).toEqual([]);
      expect(u.warnings).toEqual([
        { request: 2, code: 'TERMINAL_REPLY', message: 'the reply to the terminal request is too large (not read)' },
      ]);
      // the endless streams were cut off near the limit, not read for the whole timeout
      expect(streamed).toBeLessThan(8 * MAX_REPLY_BYTES);
    } finally {
      server.closeAllConnections();
      server.close();
    }
    await stillAnswers();
  });
});

describe(
  'long names (the did-you-mean hint cost length x length: a 1 MB name blocked the emulator for 10 s and took ' +
    '500 MB)',
  () => {
    const LONG = 'k'.repeat(3_000_000);

    it('a reply with a long command or param name: the violation, without hint', async () => {
      for (const [body, code, message] of [
        [{ command: LONG, command_id: 1, params: {}, variables: {} }, 'UNKNOWN_COMMAND', `"${LONG}" is not a command`],
        [
          cmd('play', 1, { media_id: '5', [LONG]: 1 }),
          'UNKNOWN_PARAM',
          `play has no param ${LONG}; its params are media_id`,
        ],
      ] as const) {
        const server = await fakeServer((_r, n) => ({ body: n === 1 ? body : cmd('hangup', 2) }));
        try {
          const t = await e.call({ url: server.url });
          expect(t.violations.map((v) => [v.code, v.message])).toEqual([[code, message]]);
        } finally {
          await server.close();
        }
      }
      await stillAnswers();
    });

    it('short names still get their hint', async () => {
      const r = await e.req('/emulator/calls', { body: { url: 'http://127.0.0.1:9/rt', caller: { actoins: [] } } });
      expect(r.json.error.errors[0].message).toBe(
        'unknown key actoins in the caller script (did you mean actions?); the keys are name, description, ' +
          'call, actions, defaults, $schema',
      );
    });
  },
);

describe('calls running at once', () => {
  it(
    'beyond --max-live-calls: control API 429 TOO_MANY_CALLS, calls.realtime code 24; accepted again once ' +
      'calls end',
    async () => {
      const busy = await startEmulator({ maxLiveCalls: 2 });
      const server = await fakeServer(() => ({ body: cmd('hangup', 1), delayMs: 500 }));
      try {
        const app = (await busy.rpc('apps.create', ['REALTIME10', 'x', { url: server.url }])).result;
        for (let i = 0; i < 2; i++)
          expect((await busy.req('/emulator/calls', { body: { url: server.url, wait: false } })).status).toBe(202);
        const message =
          '2 calls are running, the most this emulator runs at once (--max-live-calls 2): try again when ' +
          'some have ended';
        const r = await busy.req('/emulator/calls', { body: { url: server.url, wait: false } });
        expect([r.status, r.json]).toEqual([429, { error: { code: 'TOO_MANY_CALLS', message } }]);
        expect(await busy.rpc('calls.realtime', [app.hash, { number: '+447700900456', timeout: 30 }], 3)).toEqual({
          jsonrpc: '2.0',
          id: 3,
          error: { code: 24, message },
        });
        expect(busy.emu.ctx.store.calls.size).toBe(2);
        await Promise.allSettled([...busy.emu.ctx.background]);
        expect((await busy.req('/emulator/calls', { body: { url: server.url } })).json).toMatchObject({
          status: 'ended',
          ended_by: 'flow',
        });
      } finally {
        await server.close();
        await busy.close();
      }
    },
  );
});

describe('a request that never ends', () => {
  /** Writes `text` and waits (10 s at most) for the emulator to close the connection; what it answered. */
  function sendAndWait(base: string, text: string): Promise<string> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve, reject) => {
      const s = connect(Number(port), hostname);
      let out = '';
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`the connection was still open after 10 s; got ${JSON.stringify(out)}`));
      }, 10_000);
      s.on('data', (d) => (out += d));
      s.on('error', () => undefined);
      s.on('close', () => {
        clearTimeout(timer);
        resolve(out);
      });
      s.write(text);
    });
  }

  it.each([
    [
      'half a body',
      `POST /rest/v1.1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: ` +
        `application/json\r\nContent-Length: 100\r\n\r\n{"from":`,
    ],
    ['headers without end', `POST /json-rpc/v1.1/ HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n`],
  ])('%s: 408 and the connection closed after the request timeout', async (_n, text) => {
    const slow = await startEmulator({ requestTimeoutMs: 300 });
    try {
      const out = await sendAndWait(slow.base, text);
      expect(out.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect((await slow.req('/emulator/health')).json).toMatchObject({ status: 'ok' });
      expect(slow.emu.ctx.store.sms.size).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

describe('errors answered before a route runs, in the envelope of the API asked', () => {
  let e: Running;
  beforeAll(async () => {
    e = await startEmulator();
  });
  afterAll(() => e.close());

  it('a bad % escape: REST, JSON-RPC and control API envelopes', async () => {
    const rest = await rawHttp(e.base, `GET /rest/v1.1/sms%zz HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}`);
    expect([rest.status, JSON.parse(rest.body)]).toEqual([
      400,
      { status: 'error', data: { code: 10, message: 'the URL has an invalid % escape' } },
    ]);
    const rpc = await rawHttp(e.base, 'POST /json-rpc/v1.1/%zz HTTP/1.1\r\nHost: x');
    expect([rpc.status, JSON.parse(rpc.body)]).toEqual([
      400,
      { jsonrpc: '2.0', error: { code: -32600, message: 'the URL has an invalid % escape' }, id: null },
    ]);
    const control = await rawHttp(e.base, 'GET /emulator/calls%zz HTTP/1.1\r\nHost: x');
    expect([control.status, JSON.parse(control.body)]).toEqual([
      400,
      { error: { code: 'BAD_REQUEST', message: 'the URL has an invalid % escape' } },
    ]);
  });

  it('headers too large and broken framing: the API read from the request line', async () => {
    const big = await rawHttp(e.base, `GET /rest/v1.1/sms HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}`);
    expect([big.status, JSON.parse(big.body)]).toEqual([
      431,
      { status: 'error', data: { code: 23, message: 'the request line and headers are too large' } },
    ]);
    const framing = await rawHttp(e.base, 'POST /json-rpc/v1.1/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1x');
    expect(framing.status).toBe(400);
    expect(JSON.parse(framing.body)).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32600, message: expect.stringMatching(/^the request is not valid HTTP\/1.1 \(HPE_/) },
      id: null,
    });
  });
});

describe('what the emulator keeps is bounded', () => {
  it('SMS past maxSms: the oldest are forgotten, the newest listed', async () => {
    const e = await startEmulator({ maxSms: 3 });
    try {
      const hashes: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await e.req('/rest/v1.1/sms', { body: { from: 'Acme', to: '+33612345678', body: `n${i}` } });
        hashes.push((r.json as { data: string }).data);
      }
      expect([...e.emu.ctx.store.sms.keys()]).toEqual(hashes.slice(2));
      expect((await e.req(`/rest/v1.1/sms/${hashes[0]}`)).status).toBe(404);
    } finally {
      await e.close();
    }
  });
});

describe('what Node would answer with an empty body, and compressed bodies', () => {
  let e: Running;
  beforeAll(async () => {
    e = await startEmulator();
  });
  afterAll(() => e.close());

  it('Expect other than 100-continue: 417 in the envelope of the API', async () => {
    const a = await rawHttp(
      e.base,
      `POST /rest/v1.1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nExpect: foo\r\nContent-Type: ` +
        `application/json`,
      '{}',
    );
    expect([a.status, JSON.parse(a.body)]).toEqual([
      417,
      { status: 'error', data: { code: 10, message: 'the only expectation supported is Expect: 100-continue' } },
    ]);
  });

  it('HTTP/1.1 without Host: 400 in the envelope', async () => {
    const a = await rawHttp(e.base, 'GET /emulator/calls HTTP/1.1');
    expect([a.status, JSON.parse(a.body)]).toEqual([
      400,
      { error: { code: 'BAD_REQUEST', message: 'an HTTP/1.1 request needs a Host header' } },
    ]);
  });

  it('a gzip body is refused with 415, not read as plain text', async () => {
    const a = await rawHttp(
      e.base,
      `POST /rest/v1.1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: ` +
        `application/json\r\nContent-Encoding: gzip`,
      JSON.stringify({ from: 'Acme', to: '+33612345678', body: 'x' }),
    );
    expect([a.status, JSON.parse(a.body)]).toEqual([
      415,
      {
        status: 'error',
        data: { code: 10, message: 'Content-Encoding "gzip" is not supported: send the body uncompressed' },
      },
    ]);
    expect(e.emu.ctx.store.sms.size).toBe(0);
  });
});
