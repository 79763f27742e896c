/** src/sms/client.ts against the emulator's SMS REST API: the two ends agree on the wire. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsApiError, SmsClient } from '../../src/sms/index.js';
import { LOGIN, PASSWORD, startEmulator, type Running } from './helpers.js';

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
let now = T0;
let e: Running;
let client: SmsClient;
beforeAll(async () => {
  e = await startEmulator({ clock: { now: () => now } });
  client = new SmsClient({ baseUrl: `${e.base}/rest/v1.1/`, login: LOGIN, password: PASSWORD, timeoutMs: 5000 });
});
afterAll(async () => e.close());

describe('SmsClient against the emulator', () => {
  it('send (POST /sms), get, and the status moving on', async () => {
    const hash = await client.send({
      from: 'Acme',
      to: '+33612345678',
      body: 'Votre code : 4242. STOP au %STOPNUM%',
      options: { nature: 'ALERTING', user_data: 'otp-1' },
    });
    expect(hash).toMatch(/^[A-Z0-9]{8}$/);
    let sms = await client.get(hash);
    expect(sms).toMatchObject({
      hash,
      type: 'OUT',
      from: 'Acme',
      to: '+33612345678',
      text: 'Votre code : 4242. STOP au 36180',
      encoding: 'GSM',
      parts: 1,
      user_data: 'otp-1',
      nature: 'ALERTING',
      status: 'PENDING',
    });
    now = T0 + 5000;
    sms = await client.get(hash);
    expect(sms.status).toBe('RECEIVED');
    expect(sms.status_history.map((h) => h.new_status)).toEqual(['PENDING', 'SENT', 'REMOTE_QUEUED', 'RECEIVED']);
  });

  it('sendViaQuery (GET /sms/send) with options, a forced encoding and a long UNICODE body', async () => {
    const hash = await client.sendViaQuery({
      from: '',
      to: '+447911123456',
      body: 'Привет! '.repeat(12),
      options: {
        force_encoding: 'UNICODE',
        flash_message: true,
        webhook: { endpoint: 'https://hooks.example.com/sms' },
      },
    });
    const sms = await client.get(hash);
    expect(sms).toMatchObject({
      from: '38100',
      encoding: 'UNICODE',
      parts: 2,
      options: {
        force_encoding: 'UNICODE',
        flash_message: true,
        webhook: { endpoint: 'https://hooks.example.com/sms' },
      },
    });
  });

  it('list (GET /sms) by type and period, Dates formatted by the client', async () => {
    now = T0 + 3600_000;
    const inbound = (
      await e.req('/emulator/sms/inbound', { body: { from: '+33612345678', to: '36180', body: 'STOP' } })
    ).json.hash;
    const out = await client.list({ type: 'OUT', from: new Date(T0 - 1000), to: new Date(T0 + 7200_000) });
    expect(out.length).toBe(2);
    const ins = await client.list({ type: 'IN', from: '2026-11-23 00:00:00', to: '2026-11-23 23:59:59' });
    expect(ins.map((s) => [s.hash, s.text, s.status])).toEqual([[inbound, 'STOP', 'RECEIVED']]);
  });

  it('errors of the emulator reach the caller as SmsApiError with the status and code', async () => {
    const wrong = new SmsClient({ baseUrl: `${e.base}/rest/v1.1`, login: LOGIN, password: 'nope' });
    await expect(wrong.send({ from: 'Acme', to: '+33612345678', body: 'x' })).rejects.toMatchObject({
      name: 'SmsApiError',
      status: 401,
      code: 22,
    });
    await expect(client.get('ZZZZ9999')).rejects.toMatchObject({
      status: 404,
      code: 20,
      message: expect.stringMatching(/no SMS with hash ZZZZ9999/),
    });
    await e.req('/emulator/sms-failures/+33699999999', {
      method: 'PUT',
      body: { http: 400, code: 11, message: 'unknown subscriber' },
    });
    const err = await client.send({ from: 'Acme', to: '+33699999999', body: 'x' }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(SmsApiError);
    expect(err).toMatchObject({ status: 400, code: 11, message: expect.stringMatching(/unknown subscriber/) });
  });
});
