/**
 * sms steps over HTTP: the real-time route performs the effect through the SMS REST
 * client against a fake SMS API, within the reply deadline.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { smsSender } from '../../src/http/sms-effect.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/sms-flows', import.meta.url).pathname;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** A fake SMS REST API answering with `answer` after `delayMs`; records what it got. */
async function fakeSmsApi(answer: { status: number; body: unknown }, delayMs = 0) {
  const got: { auth?: string; body: unknown }[] = [];
  const api = Fastify();
  api.post('/rest/v1.1/sms', async (req, reply) => {
    got.push({ auth: req.headers.authorization, body: req.body });
    await new Promise((r) => setTimeout(r, delayMs));
    return reply.code(answer.status).send(answer.body);
  });
  await api.listen({ port: 0, host: '127.0.0.1' });
  apps.push(api);
  const port = (api.server.address() as { port: number }).port;
  return { got, baseUrl: `http://127.0.0.1:${port}/rest/v1.1` };
}

async function rt(baseUrl: string | undefined, deadlineMs = 4000) {
  const app = await buildServer({
    flowsDir: FLOWS,
    logLevel: false,
    deadlineMs,
    effects: baseUrl ? { sms: smsSender({ baseUrl, login: 'acct', password: 'pw', timeoutMs: 3000 }) } : {},
  });
  apps.push(app);
  return (over = {}) =>
    app.inject({
      method: 'POST',
      url: '/rt/confirm',
      headers: { 'content-type': 'application/json' },
      payload: rtBody(over),
    });
}

describe('the sms step over HTTP', () => {
  it('sends the rendered SMS with the account credentials, saves the hash and goes on', async () => {
    const api = await fakeSmsApi({ status: 200, body: { status: 'success', data: '8242D945' } });
    const post = await rt(api.baseUrl);
    const res = await post();
    expect(res.json()).toEqual({
      command: 'play',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Sent 8242D945.' },
      variables: {},
    });
    expect(api.got).toEqual([
      {
        auth: 'Basic ' + Buffer.from('acct:pw').toString('base64'),
        body: { from: 'Acme', to: '+33612345678', body: 'Your ticket is confirmed.', options: { nature: 'ALERTING' } },
      },
    ]);
    // a retried request is answered from the stored reply: no second SMS
    expect((await post()).body).toBe(res.body);
    expect(api.got).toHaveLength(1);
  });

  it('takes the error branch when the API refuses the message', async () => {
    const api = await fakeSmsApi({
      status: 400,
      body: { status: 'error', data: { code: 10, message: 'to: not a valid number' } },
    });
    const post = await rt(api.baseUrl);
    expect((await post()).json().params).toEqual({ media_id: 'TTS|TTS_EN-GB_SERENA|Not sent: REJECTED.' });
  });

  it('answers before the deadline when the API is slow: the error branch with TIMEOUT', async () => {
    const api = await fakeSmsApi({ status: 200, body: { status: 'success', data: 'LATE0001' } }, 2000);
    const post = await rt(api.baseUrl, 600);
    const res = await post();
    expect(res.json()).toMatchObject({
      command: 'play',
      command_id: 1,
      params: { media_id: 'TTS|TTS_EN-GB_SERENA|Not sent: TIMEOUT.' },
    });
  });

  it('fails with UNAVAILABLE when no SMS account is configured', async () => {
    const post = await rt(undefined);
    expect((await post()).json().params).toEqual({ media_id: 'TTS|TTS_EN-GB_SERENA|Not sent: UNAVAILABLE.' });
  });

  it('fails with NETWORK when the API cannot be reached', async () => {
    const post = await rt('http://127.0.0.1:9/rest/v1.1');
    expect((await post()).json().params).toEqual({ media_id: 'TTS|TTS_EN-GB_SERENA|Not sent: NETWORK.' });
  });
});
