/**
 * A secret in an http lookup's URL host (`https://{{ secrets.TENANT_TOKEN }}.api.example.net/`) is never rendered
 * into what the server shows or keeps: the refusals by http.allow_hosts and by the private-address rule (an IP
 * literal, and a name that resolves to loopback: `localhost`, the one name every machine resolves so) name the host,
 * and each place they reach has the secret's value masked (by value, in each of its forms: as written, and
 * lower-cased as a URL's host is). Checked: the log lines, the step's error value, the call history, the spans, the
 * recording, the lookup's result published in the call store. Fixture: test/fixtures/http-secrets/secret-host.yaml.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { Recorder } from '../../src/http/recorder.js';
import { MemoryStore } from '../../src/store/memory.js';
import { rtBody } from '../helpers/rt.js';
import { recordSpans } from '../helpers/spans.js';
import { logLines } from '../helpers/log-lines.js';

const FLOWS = new URL('../fixtures/http-secrets', import.meta.url).pathname;
const ADMIN = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const TOKEN = 'Tk-Live-7F3a9c2E';
const SECRETS: Record<string, string> = { TENANT_TOKEN: TOKEN, BANK_ADDR: '10.20.30.40', BANK_HOST: 'localhost' };
/** Every form a secret may take in a text: as written, and lower-cased (the URL's host). */
const FORMS = [TOKEN, TOKEN.toLowerCase(), SECRETS.BANK_ADDR!, SECRETS.BANK_HOST!];

const exporter = recordSpans();

let app: FastifyInstance | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  exporter.reset();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The refusal of a name that resolves to loopback (127.0.0.1 or ::1, as the machine's resolver answers first). */
const RESOLVES =
  /^\*\*\* resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address \(http\.allow_private is false\)$/;

const noSecret = (where: string, text: string) => {
  for (const f of FORMS) expect(text, where).not.toContain(f);
};

describe('a secret in the URL host of a refused lookup', () => {
  it('is masked in the log lines, the error value, the history, the spans, the recording and the store', async () => {
    const { logs, stream } = logLines();
    dir = mkdtempSync(join(tmpdir(), 'callscript-secret-host-'));
    const recorder = new Recorder(dir);
    const store = new MemoryStore();
    app = Fastify({ logger: { level: 'debug', stream } });
    await app.register(callscript, {
      flowsDir: FLOWS,
      store,
      recorder,
      admin: { login: 'boss', password: 's3cret' },
      http: {
        allowHosts: ['*.corp.example', SECRETS.BANK_ADDR!, SECRETS.BANK_HOST!],
        allowPrivate: false,
        secret: (n) => SECRETS[n],
      },
    });
    const post = (over: Record<string, unknown>) =>
      app!
        .inject({
          method: 'POST',
          url: '/rt/secret-host',
          // (not the default localhost: one of the secrets is that name)
          headers: { 'content-type': 'application/json', host: '192.0.2.10' },
          payload: rtBody({ callid: '808', ...over }),
        })
        .then((r) => r.json() as { command: string; command_id: number; params: Record<string, unknown> });

    // the three lookups refused within the first request: the step's error value is the code alone
    const r = await post({});
    expect(r).toMatchObject({ command: 'play', params: { media_id: 'TTS|TTS_EN-GB_SERENA|Failed REFUSED.' } });
    const published = await store.get('808#http');
    expect(published).toBeDefined();
    noSecret('the lookup result in the store', published!);
    expect(JSON.parse(published!).outcome).toMatchObject({ ok: false, error: 'REFUSED' });
    expect(JSON.parse(published!).outcome.message).toMatch(RESOLVES);
    const h = await post({ command: 'play', command_id: r.command_id });
    await post({ command: 'hangup', command_id: h.command_id, call_status: 'HANGUP' });
    await recorder.flush();

    // the log lines: each refusal named, the host masked
    const failed = logs
      .map((l) => JSON.parse(l) as { code?: string; msg: string })
      .filter((l) => l.code === 'EFFECT_FAILED')
      .map((l) => l.msg);
    expect(failed).toHaveLength(3);
    expect(failed[0]).toBe('http at hosts failed: REFUSED (the host ***.api.example.net is not in http.allow_hosts)');
    expect(failed[1]).toBe(
      'http at address failed: REFUSED (*** is a private, loopback or link-local address ' +
        '(http.allow_private is false))',
    );
    expect(failed[2]).toMatch(/^http at named failed: REFUSED \(/);
    expect(failed[2]!.slice('http at named failed: REFUSED ('.length, -1)).toMatch(RESOLVES);
    noSecret('the log lines', logs.join(''));

    // the call history
    const rec = await vi.waitFor(async () => {
      const res = await app!.inject({
        method: 'GET',
        url: '/admin/calls/808',
        headers: { authorization: ADMIN, host: '192.0.2.10' },
      });
      const body = res.json();
      if (body.status !== 'finished') throw new Error('not finished yet');
      return res.body;
    });
    expect(
      (JSON.parse(rec) as { path: { effects: { step: string; outcome: string }[] }[] }).path[0]!.effects.map((e) => [
        e.step,
        e.outcome,
      ]),
    ).toEqual([
      ['hosts', 'REFUSED'],
      ['address', 'REFUSED'],
      ['named', 'REFUSED'],
    ]);
    noSecret('the call history', rec);

    // the spans, and the recording
    noSecret('the spans', JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes)));
    expect(exporter.getFinishedSpans()).toHaveLength(3);
    const recording = readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8');
    noSecret('the recording', recording);
    expect(recording).toContain('url: https://***.api.example.net/v1/balance?key=***');
  });
});
