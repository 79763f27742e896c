/** The SMS REST API v1.1 of the emulator: envelope, auth, every field rule, SMS objects. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Running } from './helpers.js';

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
let now = T0;
let e: Running;

beforeEach(async () => {
  now = T0;
  e = await startEmulator({ clock: { now: () => now } });
});
afterEach(async () => e.close());

const SMS = { from: 'Acme', to: '+33612345678', body: 'Hello' };
const post = (body: unknown) => e.req('/rest/v1.1/sms', { body });
async function sent(body: unknown = SMS): Promise<string> {
  const r = await post(body);
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}
const get = async (hash: string) => (await e.req(`/rest/v1.1/sms/${hash}`)).json.data;
/** An error answer: HTTP status, envelope code, and the message matching `re`. */
function expectError(r: { status: number; json: any; headers: Headers }, status: number, code: number, re: RegExp) {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toContain('application/json');
  expect(r.json.status).toBe('error');
  expect(r.json.data.code).toBe(code);
  expect(r.json.data.message).toMatch(re);
  expect(Object.keys(r.json.data).sort()).toEqual(['code', 'message']);
}

describe('authentication', () => {
  it(
    '401 with code 22 and WWW-Authenticate without ' + 'credentials, with a wrong password, or a malformed header',
    async () => {
      const none = await e.req('/rest/v1.1/sms?type=OUT', { headers: { authorization: '' } });
      expectError(none, 401, 22, /authentication required/);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
      const wrong = await e.req('/rest/v1.1/sms', {
        body: SMS,
        headers: { authorization: 'Basic ' + Buffer.from('acme:nope').toString('base64') },
      });
      expectError(wrong, 401, 22, /wrong login or password/);
      expectError(
        await e.req('/rest/v1.1/sms/ABCDEFGH', { headers: { authorization: 'Basic bm9jb2xvbg==' } }),
        401,
        22,
        /authentication failed/,
      );
      expectError(
        await e.req('/rest/v1.1/sms/ABCDEFGH', { headers: { authorization: 'Bearer x' } }),
        401,
        22,
        /authentication failed/,
      );
      expect(e.emu.ctx.store.sms.size).toBe(0);
    },
  );
});

describe('POST /sms', () => {
  it('answers the new hash (8 upper-case letters and digits) in the success envelope', async () => {
    const r = await post(SMS);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'success', data: expect.stringMatching(/^[A-Z0-9]{8}$/) });
  });

  it('the SMS object has every field, in order, with its status history moving on with time', async () => {
    const hash = await sent({ ...SMS, options: { nature: 'MARKETING', user_data: 'order-42' } });
    const o = await get(hash);
    expect(Object.keys(o)).toEqual([
      'type',
      'hash',
      'from',
      'to',
      'text',
      'options',
      'encoding',
      'user_data',
      'b_customer_debit',
      'network',
      'status',
      'status_error',
      'parts',
      'nature',
      'date_creation',
      'date_update',
      'date_sent',
      'date_received',
      'status_history',
    ]);
    expect(o).toEqual({
      type: 'OUT',
      hash,
      from: 'Acme',
      to: '+33612345678',
      text: 'Hello',
      options: { nature: 'MARKETING', user_data: 'order-42' },
      encoding: 'GSM',
      user_data: 'order-42',
      b_customer_debit: '0.0500',
      network: '20801',
      status: 'PENDING',
      status_error: '',
      parts: 1,
      nature: 'MARKETING',
      date_creation: '2026-11-23 10:00:00',
      date_update: '2026-11-23 10:00:00',
      date_sent: '0000-00-00 00:00:00',
      date_received: '0000-00-00 00:00:00',
      status_history: [{ old_status: 'CREATED', new_status: 'PENDING', updated_at: '2026-11-23 10:00:00' }],
    });
    now = T0 + 1000;
    expect((await get(hash)).status).toBe('SENT');
    now = T0 + 2500;
    expect((await get(hash)).status).toBe('REMOTE_QUEUED');
    now = T0 + 3000;
    const done = await get(hash);
    expect(done.status).toBe('RECEIVED');
    expect(done.date_sent).toBe('2026-11-23 10:00:01');
    expect(done.date_received).toBe('2026-11-23 10:00:03');
    expect(done.date_update).toBe('2026-11-23 10:00:03');
    expect(done.status_history.map((h: any) => `${h.old_status}>${h.new_status}@${h.updated_at.slice(17)}`)).toEqual([
      'CREATED>PENDING@00',
      'PENDING>SENT@01',
      'SENT>REMOTE_QUEUED@02',
      'REMOTE_QUEUED>RECEIVED@03',
    ]);
  });

  it(
    'encoding and parts: GSM 160/153 with extension characters ' + 'counting twice, UNICODE 70/67, forced encodings',
    async () => {
      const cases: [string, object | null, string, number][] = [
        ['a'.repeat(160), null, 'GSM', 1],
        ['a'.repeat(161), null, 'GSM', 2],
        ['a'.repeat(306), null, 'GSM', 2],
        ['a'.repeat(307), null, 'GSM', 3],
        ['a'.repeat(159) + '€', null, 'GSM', 2], // 161 positions
        ['a'.repeat(158) + '€', null, 'GSM', 1],
        ['{'.repeat(80), null, 'GSM', 1],
        ['é'.repeat(160), null, 'GSM', 1], // é is in the GSM basic table
        ['ê'.repeat(70), null, 'UNICODE', 1],
        ['ê'.repeat(71), null, 'UNICODE', 2],
        ['ê'.repeat(134), null, 'UNICODE', 2],
        ['ê'.repeat(135), null, 'UNICODE', 3],
        ['Hello', { force_encoding: 'UNICODE' }, 'UNICODE', 1],
      ];
      for (const [body, options, encoding, parts] of cases) {
        const o = await get(await sent({ ...SMS, body, options }));
        expect({ len: body.length, encoding: o.encoding, parts: o.parts }).toEqual({
          len: body.length,
          encoding,
          parts,
        });
        expect(o.b_customer_debit).toBe((parts * 0.05).toFixed(4));
      }
      const forced = await get(await sent({ ...SMS, body: 'Fête à Noël ✓', options: { force_encoding: 'GSM' } }));
      expect(forced.encoding).toBe('GSM');
      expect(forced.text).not.toContain('ê');
      expect(forced.text.startsWith('Fete')).toBe(true);
    },
  );

  it(
    '%STOPNUM% is replaced for a custom sender, kept for the shared short code; "" sends from the shared short ' +
      'code',
    async () => {
      expect((await get(await sent({ ...SMS, body: 'Promo! STOP au %STOPNUM%' }))).text).toBe('Promo! STOP au 36180');
      const shared = await get(await sent({ ...SMS, from: '', body: 'STOP au %STOPNUM%' }));
      expect(shared.text).toBe('STOP au %STOPNUM%');
      expect(shared.from).toBe('38100');
      expect((await get(await sent({ ...SMS, from: 'SMS' }))).from).toBe('SMS');
    },
  );

  it('takes a form-urlencoded body as well', async () => {
    const r = await e.req('/rest/v1.1/sms', {
      raw: 'from=Acme&to=%2B33612345678&body=Hi+there&options.flash_message=true',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status, r.text).toBe(200);
    const o = await get(r.json.data);
    expect(o.text).toBe('Hi there');
    expect(o.options).toEqual({ flash_message: true });
  });

  const bad: [string, unknown, RegExp][] = [
    ['missing from', { to: SMS.to, body: 'x' }, /from is required/],
    ['null from', { ...SMS, from: null }, /from cannot be null \(use "" for a shared short code\)/],
    ['a number as from', { ...SMS, from: 12345 }, /from must be a string, got number 12345/],
    [
      'a sender over 11 characters',
      { ...SMS, from: 'AcmeCompanyX' },
      /from "AcmeCompanyX" is not a valid sender: a sender is 1 to 11/,
    ],
    ['a digits-only sender', { ...SMS, from: '12345' }, /needs at least one letter/],
    ['a sender with a dot', { ...SMS, from: 'Acme.com' }, /is not a valid sender/],
    ['missing to', { from: 'Acme', body: 'x' }, /to is required/],
    ['a national number', { ...SMS, to: '0612345678' }, /to "0612345678" is not a valid recipient: an E.164 number/],
    ['an impossible number', { ...SMS, to: '+3361' }, /not a possible phone number/],
    ['to as a list', { ...SMS, to: ['+33612345678'] }, /to must be a string, got an array/],
    ['missing body', { from: 'Acme', to: SMS.to }, /body is required/],
    ['an empty body', { ...SMS, body: '' }, /body is empty/],
    [
      'a body over 255 parts, known from its length',
      { ...SMS, body: 'a'.repeat(153 * 255 + 1) },
      /body is too long: at least 256 parts \(at most 255 parts\)/,
    ],
    [
      'a UNICODE body over 255 parts',
      { ...SMS, body: 'д'.repeat(67 * 255 + 1) },
      /body is too long: 256 parts of UNICODE \(at most 255 parts\)/,
    ],
    [
      'a forced UNICODE body over 255 parts',
      { ...SMS, body: 'a'.repeat(67 * 255 + 1), options: { force_encoding: 'UNICODE' } },
      /body is too long: at least 256 parts/,
    ],
    [
      'a body of 100,000 characters, forced GSM',
      { ...SMS, body: 'a'.repeat(100000), options: { force_encoding: 'GSM' } },
      /body is too long: 100000 characters \(a message has at most 255 parts; bodies over 78030 characters are refused unread\)/,
    ],
    ['options as a string', { ...SMS, options: 'GSM' }, /options must be an object or null, got the string "GSM"/],
    [
      'an unknown option',
      { ...SMS, options: { encoding: 'GSM' } },
      /options.encoding is not an option; the options are force_encoding, nature, user_data, flash_message, webhook/,
    ],
    [
      'a bad force_encoding',
      { ...SMS, options: { force_encoding: 'UTF8' } },
      /options.force_encoding must be "GSM" or "UNICODE"/,
    ],
    ['a bad nature', { ...SMS, options: { nature: 'PROMO' } }, /options.nature must be "ALERTING" or "MARKETING"/],
    [
      'a long user_data',
      { ...SMS, options: { user_data: 'x'.repeat(33) } },
      /options.user_data is 33 characters long; at most 32/,
    ],
    [
      'a string flash_message',
      { ...SMS, options: { flash_message: 'yes' } },
      /options.flash_message must be true or false/,
    ],
    [
      'a webhook as a string',
      { ...SMS, options: { webhook: 'https://x.test/h' } },
      /options.webhook must be an object \{"endpoint"/,
    ],
    [
      'a webhook without endpoint',
      { ...SMS, options: { webhook: {} } },
      /options.webhook.endpoint must be a URL string/,
    ],
    [
      'a webhook ftp endpoint',
      { ...SMS, options: { webhook: { endpoint: 'ftp://x.test' } } },
      /is not an http:\/\/ or https:\/\/ URL/,
    ],
    [
      'a webhook extra field',
      { ...SMS, options: { webhook: { endpoint: 'https://x.test', secret: 'k' } } },
      /options.webhook.secret is not a webhook field/,
    ],
    ['text instead of body', { from: 'Acme', to: SMS.to, text: 'x' }, /unknown parameter text \(did you mean body\?\)/],
  ];
  it.each(bad)('400 code 11 for %s', async (_name, body, re) => {
    expectError(await post(body), 400, 11, re);
    expect(e.emu.ctx.store.sms.size).toBe(0);
  });

  it('accepts options null, webhook and flash_message', async () => {
    expect((await get(await sent({ ...SMS, options: null }))).options).toBeNull();
    const o = await get(
      await sent({ ...SMS, options: { webhook: { endpoint: 'https://hooks.example.com/sms' }, flash_message: false } }),
    );
    expect(o.options).toEqual({ webhook: { endpoint: 'https://hooks.example.com/sms' }, flash_message: false });
  });

  it('malformed requests: not JSON, an array, empty, another Content-Type, too large', async () => {
    expectError(
      await e.req('/rest/v1.1/sms', { raw: '{"from": "Acme",', headers: { 'content-type': 'application/json' } }),
      400,
      10,
      /the body is not valid JSON/,
    );
    expectError(await post([SMS]), 400, 10, /the body must be a JSON object/);
    expectError(
      await e.req('/rest/v1.1/sms', { raw: '', headers: { 'content-type': 'application/json' } }),
      400,
      10,
      /empty/,
    );
    expectError(
      await e.req('/rest/v1.1/sms', { raw: 'from=Acme', headers: { 'content-type': 'text/plain' } }),
      415,
      10,
      /Content-Type: application\/json/,
    );
    expectError(await e.req('/rest/v1.1/sms', { method: 'POST' }), 400, 10, /JSON object/);
    expectError(await post({ ...SMS, body: 'a'.repeat(3 * 1024 * 1024) }), 413, 23, /too large/);
  });
});

describe('GET /sms/send', () => {
  const q = (s: string) => e.req(`/rest/v1.1/sms/send?${s}`);
  it('sends with query-string parameters and options.<key>=<value>', async () => {
    const r = await q(
      'from=Acme&to=%2B447911123456&body=Caf%C3%A9%20%E2%82%AC5&options.force_encoding=GSM&options.flash_message=1' +
        '&options.webhook.endpoint=https%3A%2F%2Fh.example.com%2Fx&options.user_data=u1',
    );
    expect(r.status, r.text).toBe(200);
    const o = await get(r.json.data);
    expect(o).toMatchObject({
      from: 'Acme',
      to: '+447911123456',
      text: 'Café €5',
      encoding: 'GSM',
      parts: 1,
      user_data: 'u1',
    });
    expect(o.options).toEqual({
      force_encoding: 'GSM',
      flash_message: true,
      webhook: { endpoint: 'https://h.example.com/x' },
      user_data: 'u1',
    });
    expect((await get((await q('from=&to=%2B33612345678&body=x')).json.data)).from).toBe('38100');
  });
  it.each([
    ['from=Acme&body=x', /to is required/],
    ['to=%2B33612345678&body=x', /from is required/],
    ['from=Acme&to=%2B33612345678&body=x&to=%2B33612345679', /to is given 2 times/],
    ['from=Acme&to=%2B33612345678&body=x&sender=y', /unknown parameter sender \(did you mean from\?\)/],
    [
      'from=Acme&to=%2B33612345678&body=x&options.flash_message=maybe',
      /options.flash_message must be true or false \(or 1 \/ 0\), got "maybe"/,
    ],
    ['from=Acme&to=%2B33612345678&body=x&options=GSM', /give options as options.<key>=<value>/],
    ['from=Acme&to=%2B33612345678&body=x&options.colour=red', /options.colour is not an option/],
    ['from=Acme&to=%2B33612345678&body=x&options.webhook=notaurl', /options.webhook.endpoint "notaurl" is not an http/],
    ['from=Acme&to=33612345678&body=x', /to "33612345678" is not a valid recipient/],
  ])('400 code 11 for %s', async (query, re) => {
    expectError(await q(query), 400, 11, re);
  });
});

describe('GET /sms/<hash> and GET /sms', () => {
  it('404 code 20 for an unknown hash, 400 code 11 for a malformed one', async () => {
    expectError(await e.req('/rest/v1.1/sms/ABCD1234'), 404, 20, /no SMS with hash ABCD1234/);
    expectError(
      await e.req('/rest/v1.1/sms/abcd1234'),
      400,
      11,
      /is not an SMS hash \(8 upper-case letters and digits/,
    );
    expectError(await e.req('/rest/v1.1/sms/TOOLONGHASH'), 400, 11, /not an SMS hash/);
  });

  it('lists OUT and IN SMS of a period; inbound SMS come from the control API', async () => {
    const a = await sent();
    now = T0 + 60_000;
    const b = await sent({ ...SMS, body: 'second' });
    const inbound = await e.req('/emulator/sms/inbound', {
      body: { from: '+33612345678', to: '+33987654321', body: 'STOP' },
    });
    expect(inbound.status).toBe(200);
    expect(inbound.json.sms).toMatchObject({
      type: 'IN',
      from: '+33612345678',
      to: '+33987654321',
      text: 'STOP',
      status: 'RECEIVED',
      b_customer_debit: '0.0000',
    });
    const list = async (s: string) => (await e.req(`/rest/v1.1/sms?${s}`)).json.data.map((x: any) => x.hash);
    expect(await list('type=OUT&from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59')).toEqual([a, b]);
    expect(await list('type=OUT&from=2026-11-23%2010:00:30&to=2026-11-23%2023:59:59')).toEqual([b]);
    expect(await list('type=OUT&from=2026-11-23%2010:00:00&to=2026-11-23%2010:00:00')).toEqual([a]);
    expect(await list('type=IN&from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59')).toEqual([inbound.json.hash]);
    expect(await list('type=OUT&from=2026-11-24%2000:00:00&to=2026-11-24%2023:59:59')).toEqual([]);
  });

  it.each([
    ['from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59', /type is required \(IN or OUT\)/],
    ['type=OUT&to=2026-11-23%2023:59:59', /from is required/],
    ['type=OUT&from=2026-11-23%2000:00:00', /to is required/],
    ['type=SENT&from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59', /type must be IN or OUT, got "SENT"/],
    [
      'type=OUT&from=2026-11-23&to=2026-11-23%2023:59:59',
      /from "2026-11-23" is not a datetime: a datetime is YYYY-MM-DD HH:MM:SS/,
    ],
    ['type=OUT&from=2026-02-30%2000:00:00&to=2026-11-23%2023:59:59', /not a real date/],
    ['type=OUT&from=2026-11-24%2000:00:00&to=2026-11-23%2023:59:59', /from \(2026-11-24 00:00:00\) is after to/],
    [
      'type=OUT&type=IN&from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59',
      /type must be a string, got an array \(given more than once\?\)/,
    ],
    ['type=OUT&from=2026-11-23%2000:00:00&to=2026-11-23%2023:59:59&page=2', /unknown query parameter page/],
  ])('400 code 11 for %s', async (query, re) => {
    expectError(await e.req(`/rest/v1.1/sms?${query}`), 400, 11, re);
  });

  it('405 code 21 for another method on an SMS path, 404 code 20 elsewhere under /rest/v1.1', async () => {
    expectError(await e.req('/rest/v1.1/sms', { method: 'DELETE' }), 405, 21, /DELETE is not allowed on \/sms/);
    expectError(await e.req('/rest/v1.1/sms/ABCD1234', { method: 'PUT', body: {} }), 405, 21, /PUT is not allowed/);
    expectError(await e.req('/rest/v1.1/calls'), 404, 20, /no endpoint GET \/calls/);
  });
});

describe('control API test hooks', () => {
  it('moves an SMS to a failure status with an error; later steps are dropped', async () => {
    const hash = await sent();
    now = T0 + 1500;
    const r = await e.req(`/emulator/sms/${hash}/status`, { body: { status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER' } });
    expect(r.status).toBe(200);
    now = T0 + 10_000;
    const o = await get(hash);
    expect(o).toMatchObject({
      status: 'FAILED',
      status_error: 'UNKNOWN_SUBSCRIBER',
      date_sent: '2026-11-23 10:00:01',
      date_received: '0000-00-00 00:00:00',
      date_update: '2026-11-23 10:00:01',
    });
    expect(o.status_history.at(-1)).toEqual({
      old_status: 'SENT',
      new_status: 'FAILED',
      updated_at: '2026-11-23 10:00:01',
    });
    expect((await e.req(`/emulator/sms/${hash}/status`, { body: { status: 'LOST' } })).json.error.message).toMatch(
      /status must be one of CREATED, PENDING/,
    );
    expect((await e.req('/emulator/sms/ZZZZ9999/status', { body: { status: 'FAILED' } })).status).toBe(404);
    expect((await e.req('/emulator/sms/inbound', { body: { from: '', to: '+33987654321', body: 'x' } })).status).toBe(
      400,
    );
    expect((await e.req('/emulator/sms/inbound', { body: { from: '+33612345678', to: 'me', body: 'x' } })).status).toBe(
      400,
    );
    expect(
      (await e.req('/emulator/sms/inbound', { body: { from: '+33612345678', to: '36180', body: '' } })).status,
    ).toBe(400);
  });
});
