/**
 * A prompt that is one `{{ }}` alone renders text (issue 22 item 11): the call ends, and the server says why: the
 * log line RUNTIME_MEDIA (level error, with its hint), the `call ended` line and the call history (outcome error,
 * error RUNTIME_MEDIA), `callscript trace`. Through fastify.inject.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { traceText, type CallDetail } from '../../src/cli/calls-format.js';
import { callscript } from '../../src/http/plugin.js';
import { MemoryStore } from '../../src/store/memory.js';
import { rtBody, type RtFields } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/runtime-media', import.meta.url).pathname;
const AUTH = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('a media template that renders text', () => {
  it('ends the call with RUNTIME_MEDIA in the log, the call ended line, the history and the trace', async () => {
    const lines: string[] = [];
    app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
    await app.register(callscript, {
      flowsDir: FLOWS,
      store: new MemoryStore(),
      admin: { login: 'boss', password: 's3cret' },
    });
    const a = app;
    const post = (over: Partial<RtFields>) =>
      a.inject({
        method: 'POST',
        url: '/rt/greeter',
        headers: { 'content-type': 'application/json' },
        payload: rtBody({ callid: '77', ...over }),
      });
    expect((await post({})).json()).toMatchObject({ command: 'hangup', command_id: 1 });
    await post({ command: 'hangup', command_id: 1, call_status: 'HANGUP' });
    const logs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logs.find((l) => l.code === 'RUNTIME_MEDIA')).toMatchObject({
      level: 50,
      callid: '77',
      step: 'menu',
      msg:
        'read at menu: media_id is {{ vars.greeting }} alone, a media computed at run time (a media id or ' +
        'TTS|voice|text), and it rendered text, "Welcome to Acme. Press 1."; taking the error branch (INVALID_PARAM)',
      hint: expect.stringContaining('{ say: "{{ vars.x }}" }'),
    });
    expect(logs.find((l) => l.msg === 'call ended')).toMatchObject({ status: 'HANGUP', error: 'RUNTIME_MEDIA' });
    const rec = await vi.waitFor(async () => {
      const r = await a.inject({ url: '/admin/calls/77', headers: { authorization: AUTH } });
      const body = r.json() as CallDetail & Record<string, unknown>;
      if (body.status !== 'finished') throw new Error('not finished yet');
      return body;
    });
    expect(rec).toMatchObject({ outcome: 'error', error: 'RUNTIME_MEDIA', callStatus: 'HANGUP', lastStep: 'menu' });
    expect(traceText(rec).split('\n')[0]).toMatch(
      /^call 77 {2}greeter [0-9a-f]{12} {2}finished: error RUNTIME_MEDIA \(HANGUP\), last step menu$/,
    );
  });
});
