/**
 * SMS webhooks end to end, two real processes over HTTP: `callscript serve` with
 * CALLSCRIPT_WEBHOOK_SECRET, and `callscript emulator --webhook <serve>/webhooks/callr
 * --webhook-secret <the same>`. A voicemail call sends its two SMS through the emulator;
 * the emulator's delivery reports reach the server, signed; the call's history shows each
 * SMS with its exact statuses (GET /admin/calls/:callid, callscript trace). An inbound SMS
 * is logged without its text and counted. A receiver subscribed with another secret is
 * refused (401) and records nothing.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '../../src/cli/calls.js';
import { ROOT, spawnCli, spawnServe, type Served, type SpawnedCli } from './serve.js';

const SECRET = 'e2e-webhook-secret-5f2c9a71';
const RT = { login: 'callscript', password: 'rt-secret' };
const ADMIN = { login: 'boss', password: 'admin-secret' };
const EMU = 'Basic ' + Buffer.from('emulator:emulator').toString('base64');
const HOOK_PATH = '/webhooks/callr';
const LIFECYCLE = ['CREATED', 'PENDING', 'SENT', 'REMOTE_QUEUED', 'RECEIVED'];

let serve: Served;
let emu: SpawnedCli;
let flowsDir: string;

async function emulatorApi(path: string, body?: unknown): Promise<any> {
  const r = await fetch(emu.base + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: EMU, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status} ${text}`);
  return JSON.parse(text);
}
const rpc = async (method: string, params: unknown[]) => {
  const r = await fetch(`${emu.base}/json-rpc/v1.1/`, {
    method: 'POST',
    headers: { authorization: EMU, 'content-type': 'application/json-rpc; charset=utf-8' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await r.json()) as { result?: any; error?: { code: number; message: string } };
};
async function admin(path: string): Promise<any> {
  const r = await fetch(serve.base + path, {
    headers: { authorization: 'Basic ' + Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64') },
  });
  expect(r.status, path).toBe(200);
  return r.json();
}
async function until<T>(what: string, get: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  flowsDir = mkdtempSync(join(tmpdir(), 'callscript-webhooks-'));
  cpSync(join(ROOT, 'flows'), flowsDir, { recursive: true });
  // the emulator's address is not known yet: the SMS account is given after (a free port is asked of the OS first)
  const port = await freePort();
  serve = await spawnServe(['--flows', flowsDir], {
    RT_LOGIN: RT.login,
    RT_PASSWORD: RT.password,
    ADMIN_LOGIN: ADMIN.login,
    ADMIN_PASSWORD: ADMIN.password,
    SMS_BASE_URL: `http://127.0.0.1:${port}/rest/v1.1`,
    SMS_LOGIN: 'emulator',
    SMS_PASSWORD: 'emulator',
    CALLSCRIPT_WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  });
  emu = await spawnCli(
    ['emulator', '--port', String(port), '--webhook', `${serve.base}${HOOK_PATH}`, '--webhook-secret', SECRET],
    { LOG_FORMAT: 'json' },
    (out) => /callscript emulator on (http:\/\/\S+)/.exec(out)?.[1],
  );
}, 60_000);

afterAll(async () => {
  await serve?.stop();
  if (emu && emu.child.exitCode === null) {
    emu.child.kill('SIGTERM');
    await emu.exited;
  }
  rmSync(flowsDir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

describe('emulator --webhook → serve /webhooks/callr', () => {
  it('both say so at start', async () => {
    const served = `webhooks: POST ${serve.base}${HOOK_PATH}   (signed: X-CALLR-HmacSignature`;
    const emulated =
      `webhooks       sms.mt.status_update and sms.mo to ${serve.base}${HOOK_PATH}, signed ` +
      `(X-CALLR-HmacSignature, HMAC-SHA256)`;
    // each process is taken as started at its banner's first line: the rest of it may come in a later chunk
    await until(
      'both banners whole',
      async () => (serve.output().includes(served) && emu.output().includes(emulated) ? true : undefined),
      5000,
    ).catch(() => undefined);
    expect(serve.output()).toContain(served);
    expect(emu.output()).toContain(emulated);
  });

  it(
    'a voicemail call sends two SMS; their delivery reports reach the call history: exact statuses, in the ' +
      'detail and in callscript trace',
    async () => {
      const caller_text = readFileSync(join(ROOT, 'test/fixtures/callers/voicemail/keeps-first-take.yaml'), 'utf8');
      const t = await emulatorApi('/emulator/calls', {
        url: `${serve.base}/rt/voicemail`,
        auth: RT,
        caller_text,
        caller_file: 'keeps-first-take.yaml',
      });
      expect(t.status).toBe('ended');
      expect(t.violations).toEqual([]);
      const [confirm, owner] = t.sms as { hash: string; to: string }[];
      expect([confirm!.to, owner!.to]).toEqual(['+447911000111', '+447911123456']);

      // the emulator moves each SMS to RECEIVED in 3 s (1 s a step) and reports each change
      const detail = await until('both SMS RECEIVED in the call history', async () => {
        const r = await fetch(`${serve.base}/admin/calls/${t.callid}`, {
          headers: { authorization: 'Basic ' + Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64') },
        });
        if (r.status !== 200) return undefined;
        const d = (await r.json()) as any;
        return d.status === 'finished' &&
          d.sms.length === 2 &&
          d.sms.every((s: { status: string }) => s.status === 'RECEIVED')
          ? d
          : undefined;
      });
      expect(
        detail.sms.map((s: { hash: string; step: string; status: string; history: { status: string }[] }) => [
          s.hash,
          s.step,
          s.status,
          s.history.map((h) => h.status),
        ]),
      ).toEqual([
        [confirm!.hash, 'send_confirmation', 'RECEIVED', LIFECYCLE],
        [owner!.hash, 'text_owner', 'RECEIVED', LIFECYCLE],
      ]);
      // the times are the service's: the emulator's status history of each SMS, to the second
      for (const s of detail.sms) {
        const sms = (await rpc('sms.get', [s.hash])).result;
        const theirs = sms.status_history.map((h: { new_status: string; updated_at: string }) => [
          h.new_status,
          h.updated_at,
        ]);
        const ours = s.history
          .slice(1)
          .map((h: { status: string; at: string }) => [h.status, h.at.slice(0, 19).replace('T', ' ')]);
        expect(ours).toEqual(theirs);
        expect(s.updatedAt.slice(0, 19).replace('T', ' ')).toBe(sms.date_received);
      }
      // every event was delivered at the first try, signed (the server accepted them)
      const deliveries = await emulatorApi('/emulator/webhooks/deliveries');
      const reports = deliveries.filter((d: { type: string }) => d.type === 'sms.mt.status_update');
      expect(reports).toHaveLength(8);
      expect(
        reports.every(
          (d: { outcome: string; try: number; http_status: number }) =>
            d.outcome === 'delivered' && d.try === 0 && d.http_status === 200,
        ),
      ).toBe(true);

      // callscript trace prints them
      const out = capture();
      const err = capture();
      const code = await trace(
        String(t.callid),
        { server: `http://${ADMIN.login}:${ADMIN.password}@${serve.base.slice('http://'.length)}` },
        {},
        out,
        err,
      );
      expect(code, err.text).toBe(0);
      expect(out.text).toContain('sms sent (delivery status)');
      expect(out.text).toMatch(
        new RegExp(
          `  ${confirm!.hash}  at send_confirmation  RECEIVED  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  ` +
            `CREATED → PENDING → SENT → REMOTE_QUEUED → RECEIVED`,
        ),
      );
      expect(out.text).toMatch(new RegExp(`  ${owner!.hash}  at text_owner  RECEIVED  `));

      // a failure the service reports later shows too
      await emulatorApi(`/emulator/sms/${confirm!.hash}/status`, { status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER' });
      const failed = await until('FAILED', async () => {
        const d = await admin(`/admin/calls/${t.callid}`);
        return d.sms[0].status === 'FAILED' ? d.sms[0] : undefined;
      });
      expect(failed).toMatchObject({ hash: confirm!.hash, status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER' });
      expect(failed.history.map((h: { status: string }) => h.status)).toEqual([...LIFECYCLE, 'FAILED']);
    },
    60_000,
  );

  it('an inbound SMS: logged by the server without its text, counted', async () => {
    const text = 'Please call me back about invoice 90210';
    const r = await emulatorApi('/emulator/sms/inbound', { from: '+447911000333', to: '+442079460555', body: text });
    const line = await until('the log line', async () =>
      serve
        .output()
        .split('\n')
        .find((l) => l.includes('"WEBHOOK_SMS_MO"') && l.includes(r.hash)),
    );
    expect(JSON.parse(line)).toMatchObject({
      code: 'WEBHOOK_SMS_MO',
      hash: r.hash,
      from: '+447911000333',
      to: '+442079460555',
      chars: text.length,
      parts: 1,
      encoding: 'GSM',
    });
    expect(serve.output()).not.toContain('90210');
    const counts = (await admin('/admin/webhooks')).events;
    expect(counts).toContainEqual({ type: 'sms.mo', result: 'ok', count: 1 });
    expect(
      counts.find((c: { type: string; result: string }) => c.type === 'sms.mt.status_update' && c.result === 'ok')
        ?.count,
    ).toBeGreaterThanOrEqual(8);
  });

  it('a subscription with another secret is refused (401) and not tried again; nothing is recorded', async () => {
    const sub = (
      await rpc('webhooks.subscribe', [
        'sms.mo',
        `${serve.base}${HOOK_PATH}`,
        { hmac_secret: 'not-the-secret-of-the-server' },
      ])
    ).result;
    const before =
      (await admin('/admin/webhooks')).events.find((c: { result: string }) => c.result === 'bad_signature')?.count ?? 0;
    await emulatorApi('/emulator/sms/inbound', { from: '+447911000444', to: '+442079460555', body: 'hello' });
    const refused = await until('the refusal', async () => {
      const d = await emulatorApi('/emulator/webhooks/deliveries');
      return d.find((x: { hook_hash: string }) => x.hook_hash === sub.hash);
    });
    expect(refused).toMatchObject({ type: 'sms.mo', try: 0, http_status: 401, outcome: 'refused' });
    const after = (await admin('/admin/webhooks')).events.find(
      (c: { result: string }) => c.result === 'bad_signature',
    )?.count;
    expect(after).toBe(before + 1);
    // the configured subscription (the right secret) delivered the same SMS
    expect((await admin('/admin/webhooks')).events).toContainEqual({ type: 'sms.mo', result: 'ok', count: 2 });
  });
});

function capture(): Writable & { text: string } {
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      w.text += chunk.toString();
      done();
    },
  }) as Writable & { text: string };
  w.text = '';
  return w;
}
