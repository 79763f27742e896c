/**
 * SmsClient against a small Fastify fake of the SMS REST API v1.1 on 127.0.0.1: the exact
 * requests it makes (method, path, query string, headers, JSON body) and every error path.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createServer } from 'node:net';
import {
  SmsApiError,
  SmsClient,
  SmsError,
  SmsNetworkError,
  SmsProtocolError,
  SmsTimeoutError,
  SmsValidationError,
  DEFAULT_SMS_BASE_URL,
  type Sms,
} from '../../src/sms/index.js';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string | undefined;
}
type Responder = (req: Seen) => Promise<{ status: number; body: string; type?: string } | 'hang' | 'reset' | 'partial'>;

const LOGIN = 'alice';
const PASSWORD = 's3cr:t é';
// base64("alice:s3cr:t é") with é as UTF-8 (C3 A9)
const AUTH = 'Basic ' + Buffer.from('alice:s3cr:t \u00e9', 'utf8').toString('base64');

const ok = (data: unknown) => ({ status: 200, body: JSON.stringify({ status: 'success', data }) });
const err = (status: number, code: number, message: string) => ({
  status,
  body: JSON.stringify({ status: 'error', data: { code, message } }),
});

const SMS: Sms = {
  type: 'OUT',
  hash: '8242D945',
  from: 'SMS',
  to: '+33639980042',
  text: 'Hello',
  options: { force_encoding: 'GSM', nature: 'ALERTING' },
  encoding: 'GSM',
  user_data: null,
  b_customer_debit: '0.0450',
  network: '20801',
  status: 'RECEIVED',
  status_error: null,
  parts: 1,
  nature: 'ALERTING',
  date_creation: '2024-05-01 10:00:00',
  date_update: '2024-05-01 10:00:03',
  date_sent: '2024-05-01 10:00:01',
  date_received: '2024-05-01 10:00:03',
  status_history: [
    { old_status: 'CREATED', new_status: 'PENDING', updated_at: '2024-05-01 10:00:00' },
    { old_status: 'PENDING', new_status: 'SENT', updated_at: '2024-05-01 10:00:01' },
    { old_status: 'SENT', new_status: 'RECEIVED', updated_at: '2024-05-01 10:00:03' },
  ],
};

let app: FastifyInstance;
let base: string;
let seen: Seen[];
let respond: Responder;

beforeEach(async () => {
  seen = [];
  respond = async () => ok('8242D945');
  app = Fastify({ logger: false, forceCloseConnections: true });
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.all('/*', async (req, reply) => {
    const s: Seen = { method: req.method, url: req.url, headers: req.headers, body: req.body as string | undefined };
    seen.push(s);
    const r = await respond(s);
    if (r === 'hang') return new Promise(() => {});
    if (r === 'reset') {
      req.raw.socket.destroy();
      return reply.hijack();
    }
    if (r === 'partial') {
      // Headers and the start of the body, then nothing: the timeout must cover the body too.
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      reply.raw.write('{"status":"succ');
      return;
    }
    return reply
      .code(r.status)
      .type(r.type ?? 'application/json')
      .send(r.body);
  });
  const addr = await app.listen({ host: '127.0.0.1', port: 0 });
  base = `${addr}/rest/v1.1`;
});

afterEach(async () => {
  await app.close();
});

const client = (timeoutMs?: number) =>
  new SmsClient({ baseUrl: base, login: LOGIN, password: PASSWORD, ...(timeoutMs ? { timeoutMs } : {}) });

/** Runs `p`, expects it to reject, returns the error. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('requests', () => {
  it('defaults to the emulator address', () => {
    expect(new SmsClient({ login: 'a', password: 'b' }).baseUrl).toBe('http://127.0.0.1:4010/rest/v1.1');
    expect(DEFAULT_SMS_BASE_URL).toBe('http://127.0.0.1:4010/rest/v1.1');
    expect(new SmsClient({ baseUrl: 'http://h/rest/v1.1/', login: 'a', password: 'b' }).baseUrl).toBe(
      'http://h/rest/v1.1',
    );
  });

  it('send: POST /sms with Basic auth and the JSON body, returns the hash', async () => {
    const hash = await client().send({
      from: 'Acme',
      to: '+33639980042',
      body: 'Hello é €',
      options: { force_encoding: 'GSM', webhook: { endpoint: 'https://example.com/hook' } },
    });
    expect(hash).toBe('8242D945');
    expect(seen).toHaveLength(1);
    const r = seen[0]!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/rest/v1.1/sms');
    expect(r.headers.authorization).toBe(AUTH);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers.accept).toBe('application/json');
    expect(r.headers.expect).toBeUndefined();
    expect(r.body).toBe(
      JSON.stringify({
        from: 'Acme',
        to: '+33639980042',
        body: 'Hello é €',
        options: { force_encoding: 'GSM', webhook: { endpoint: 'https://example.com/hook' } },
      }),
    );
  });

  it('send: options omitted go out as null; an empty sender is kept', async () => {
    await client().send({ from: '', to: '+33639980042', body: 'x' });
    expect(JSON.parse(seen[0]!.body!)).toEqual({ from: '', to: '+33639980042', body: 'x', options: null });
  });

  it('sendViaQuery: GET /sms/send, every argument in the query string, options.<key>=<value>', async () => {
    const hash = await client().sendViaQuery({
      from: 'My Shop',
      to: '+33639980042',
      body: 'Hi & bye +1 100%',
      options: {
        force_encoding: 'UNICODE',
        nature: 'MARKETING',
        user_data: 'order=42',
        flash_message: true,
        webhook: { endpoint: 'https://example.com/h?a=1' },
      },
    });
    expect(hash).toBe('8242D945');
    const r = seen[0]!;
    expect(r.method).toBe('GET');
    expect(r.url).toBe(
      '/rest/v1.1/sms/send?from=My%20Shop&to=%2B33639980042&body=Hi%20%26%20bye%20%2B1%20100%25' +
        '&options.force_encoding=UNICODE&options.nature=MARKETING&options.user_data=order%3D42' +
        '&options.flash_message=true&options.webhook.endpoint=https%3A%2F%2Fexample.com%2Fh%3Fa%3D1',
    );
    expect(r.headers.authorization).toBe(AUTH);
    expect(r.headers.expect).toBeUndefined();
    expect(r.headers['content-type']).toBeUndefined();
    expect(r.body).toBeUndefined();
  });

  it('sendViaQuery without options: from, to, body only', async () => {
    await client().sendViaQuery({ from: '', to: '+33639980042', body: 'x', options: null });
    expect(seen[0]!.url).toBe('/rest/v1.1/sms/send?from=&to=%2B33639980042&body=x');
  });

  it('get: GET /sms/<hash>, returns the SMS object', async () => {
    respond = async () => ok(SMS);
    const sms = await client().get('8242D945');
    expect(sms).toEqual(SMS);
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/rest/v1.1/sms/8242D945' });
    expect(seen[0]!.headers.authorization).toBe(AUTH);
  });

  it('list: GET /sms?type&from&to; a Date is sent as a UTC datetime', async () => {
    respond = async () => ok([SMS, { ...SMS, hash: 'AAAA1111', type: 'IN' }]);
    const list = await client().list({
      type: 'OUT',
      from: '2024-05-01 00:00:00',
      to: new Date(Date.UTC(2024, 4, 2, 23, 59, 59, 500)),
    });
    expect(list.map((s) => s.hash)).toEqual(['8242D945', 'AAAA1111']);
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: '/rest/v1.1/sms?type=OUT&from=2024-05-01%2000%3A00%3A00&to=2024-05-02%2023%3A59%3A59',
    });
    expect(seen[0]!.headers.authorization).toBe(AUTH);
  });

  it('list: an empty array', async () => {
    respond = async () => ok([]);
    expect(await client().list({ type: 'IN', from: '2024-05-01 00:00:00', to: '2024-05-02 00:00:00' })).toEqual([]);
  });
});

describe('local validation: nothing is sent', () => {
  const cases: Array<[string, () => Promise<unknown>, string, string]> = [
    [
      'to not E.164',
      () => client().send({ from: 'Acme', to: '0639980042', body: 'x' }),
      'to',
      'to: an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. +33123456789)',
    ],
    [
      'to not possible',
      () => client().send({ from: 'Acme', to: '+3312', body: 'x' }),
      'to',
      'to: not a possible phone number for its country code',
    ],
    [
      'from too long',
      () => client().send({ from: 'ABCDEFGHIJKL', to: '+33639980042', body: 'x' }),
      'from',
      'from: a sender is 1 to 11 of a-z A-Z 0-9 space - _',
    ],
    [
      'from digits only',
      () => client().sendViaQuery({ from: '12345', to: '+33639980042', body: 'x' }),
      'from',
      'from: a sender needs at least one letter',
    ],
    [
      'from bad character',
      () => client().send({ from: 'Acme!', to: '+33639980042', body: 'x' }),
      'from',
      'from: a sender is 1 to 11 of a-z A-Z 0-9 space - _',
    ],
    [
      'empty body',
      () => client().send({ from: 'Acme', to: '+33639980042', body: '' }),
      'body',
      'body: the message body is empty',
    ],
    [
      'force_encoding',
      () => client().send({ from: '', to: '+33639980042', body: 'x', options: { force_encoding: 'UTF8' as 'GSM' } }),
      'options.force_encoding',
      'options.force_encoding: GSM or UNICODE',
    ],
    [
      'nature',
      () => client().send({ from: '', to: '+33639980042', body: 'x', options: { nature: 'SPAM' as 'ALERTING' } }),
      'options.nature',
      'options.nature: ALERTING or MARKETING',
    ],
    [
      'user_data',
      () => client().send({ from: '', to: '+33639980042', body: 'x', options: { user_data: 'x'.repeat(33) } }),
      'options.user_data',
      'options.user_data: 32 characters at most',
    ],
    [
      'flash_message',
      () =>
        client().send({
          from: '',
          to: '+33639980042',
          body: 'x',
          options: { flash_message: 'yes' as unknown as boolean },
        }),
      'options.flash_message',
      'options.flash_message: true or false',
    ],
    [
      'webhook',
      () => client().send({ from: '', to: '+33639980042', body: 'x', options: { webhook: { endpoint: 'ftp://x' } } }),
      'options.webhook.endpoint',
      'options.webhook.endpoint: an http: or https: URL',
    ],
    [
      'unknown option',
      () => client().send({ from: '', to: '+33639980042', body: 'x', options: { flash: true } as never }),
      'options.flash',
      'options.flash: unknown option (known: force_encoding, nature, user_data, flash_message, webhook)',
    ],
    [
      'list type',
      () => client().list({ type: 'ALL' as 'IN', from: '2024-05-01 00:00:00', to: '2024-05-02 00:00:00' }),
      'type',
      'type: IN or OUT',
    ],
    [
      'list from',
      () => client().list({ type: 'IN', from: '2024-05-01T00:00:00Z', to: '2024-05-02 00:00:00' }),
      'from',
      'from: a datetime is YYYY-MM-DD HH:MM:SS (UTC)',
    ],
    [
      'list to',
      () => client().list({ type: 'IN', from: '2024-05-01 00:00:00', to: '2024-02-30 00:00:00' }),
      'to',
      'to: not a real date and time',
    ],
    [
      'list invalid Date',
      () => client().list({ type: 'IN', from: new Date(NaN), to: '2024-05-02 00:00:00' }),
      'from',
      'from: a datetime is YYYY-MM-DD HH:MM:SS (UTC)',
    ],
    ['get empty hash', () => client().get(''), 'hash', 'hash: an SMS hash is required'],
  ];
  for (const [name, call, param, message] of cases) {
    it(name, async () => {
      const e = await rejection(call());
      expect(e).toBeInstanceOf(SmsValidationError);
      expect(e).toMatchObject({ kind: 'validation', param, message });
      expect(seen).toHaveLength(0);
    });
  }
});

describe('errors', () => {
  it('401 envelope: SmsApiError with status, code, message', async () => {
    respond = async () => err(401, 22, 'Authentication failed');
    const e = await rejection(client().send({ from: 'Acme', to: '+33639980042', body: 'x' }));
    expect(e).toBeInstanceOf(SmsApiError);
    expect(e).toBeInstanceOf(SmsError);
    expect(e).toMatchObject({
      kind: 'api',
      name: 'SmsApiError',
      status: 401,
      code: 22,
      message: 'Authentication failed',
    });
  });

  it('400 envelope', async () => {
    respond = async () => err(400, 10, 'to: not a possible phone number for its country code');
    const e = await rejection(client().sendViaQuery({ from: 'Acme', to: '+33639980042', body: 'x' }));
    expect(e).toMatchObject({
      kind: 'api',
      status: 400,
      code: 10,
      message: 'to: not a possible phone number for its country code',
    });
  });

  it('404 envelope on get', async () => {
    respond = async () => err(404, 404, 'no SMS with hash ZZZZ9999');
    const e = await rejection(client().get('ZZZZ9999'));
    expect(e).toMatchObject({ kind: 'api', status: 404, code: 404 });
  });

  it('500 with a body that is not JSON: SmsProtocolError with status and body', async () => {
    respond = async () => ({ status: 500, body: '<html>Internal Server Error</html>', type: 'text/html' });
    const e = await rejection(client().send({ from: 'Acme', to: '+33639980042', body: 'x' }));
    expect(e).toBeInstanceOf(SmsProtocolError);
    expect(e).toMatchObject({ kind: 'protocol', status: 500, body: '<html>Internal Server Error</html>' });
    expect((e as Error).message).toBe(`POST ${base}/sms: HTTP 500 with a body that is not JSON`);
  });

  it('JSON that is not the envelope: SmsProtocolError', async () => {
    respond = async () => ({ status: 200, body: '"8242D945"' });
    const e = await rejection(client().send({ from: 'Acme', to: '+33639980042', body: 'x' }));
    expect(e).toMatchObject({ kind: 'protocol', status: 200, body: '"8242D945"' });
    expect((e as Error).message).toBe(`POST ${base}/sms: HTTP 200 with a body that is not the API envelope`);
  });

  it('an error envelope with HTTP 200, or a success envelope with HTTP 500: SmsProtocolError', async () => {
    respond = async () => ({ ...err(400, 1, 'x'), status: 200 });
    expect(await rejection(client().get('8242D945'))).toMatchObject({ kind: 'protocol', status: 200 });
    respond = async () => ({ ...ok('8242D945'), status: 500 });
    expect(await rejection(client().get('8242D945'))).toMatchObject({ kind: 'protocol', status: 500 });
  });

  it(
    'unexpected data: a hash that is not a string, an SMS ' + 'that is not an object, a list that is not an array',
    async () => {
      respond = async () => ok(42);
      expect(await rejection(client().send({ from: 'Acme', to: '+33639980042', body: 'x' }))).toMatchObject({
        kind: 'protocol',
        body: '42',
      });
      respond = async () => ok('8242D945');
      expect(await rejection(client().get('8242D945'))).toMatchObject({ kind: 'protocol', body: '"8242D945"' });
      respond = async () => ok({ hash: 'A' });
      expect(
        await rejection(client().list({ type: 'IN', from: '2024-05-01 00:00:00', to: '2024-05-02 00:00:00' })),
      ).toMatchObject({ kind: 'protocol' });
    },
  );

  it('timeout before the headers: SmsTimeoutError', async () => {
    respond = async () => 'hang';
    const t0 = Date.now();
    const e = await rejection(client(150).get('8242D945'));
    expect(e).toBeInstanceOf(SmsTimeoutError);
    expect(e).toMatchObject({
      kind: 'timeout',
      timeoutMs: 150,
      message: `GET ${base}/sms/8242D945: no complete reply within 150 ms`,
    });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('timeout while the body is arriving: SmsTimeoutError', async () => {
    respond = async () => 'partial';
    const e = await rejection(client(150).get('8242D945'));
    expect(e).toMatchObject({ kind: 'timeout', timeoutMs: 150 });
  });

  it('connection refused: SmsNetworkError ECONNREFUSED', async () => {
    const port = await freePort();
    const c = new SmsClient({ baseUrl: `http://127.0.0.1:${port}/rest/v1.1`, login: LOGIN, password: PASSWORD });
    const e = await rejection(c.send({ from: 'Acme', to: '+33639980042', body: 'x' }));
    expect(e).toBeInstanceOf(SmsNetworkError);
    expect(e).toMatchObject({
      kind: 'network',
      code: 'ECONNREFUSED',
      message: `POST http://127.0.0.1:${port}/rest/v1.1/sms: connection refused (ECONNREFUSED)`,
    });
    expect((e as Error).cause).toBeInstanceOf(Error);
  });

  it('connection closed without a reply: SmsNetworkError', async () => {
    respond = async () => 'reset';
    const e = await rejection(client().get('8242D945'));
    expect(e).toBeInstanceOf(SmsNetworkError);
    // undici reports a socket closed before the reply as UND_ERR_SOCKET ("other side closed")
    expect(e).toMatchObject({
      kind: 'network',
      code: 'UND_ERR_SOCKET',
      message: `GET ${base}/sms/8242D945: connection closed by the server (UND_ERR_SOCKET)`,
    });
  });

  it('a bad timeoutMs is refused at construction', () => {
    expect(() => new SmsClient({ login: 'a', password: 'b', timeoutMs: 0 })).toThrow(RangeError);
  });
});

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
