/**
 * --data durability with real processes: every SMS acknowledged before a kill -9 is there
 * after a restart, whether or not compactions ran meanwhile; no temporary file is left.
 */
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeRecord, headerRecord } from '../../src/emulator/persist/format.js';
import { cmd, fakeServer, tempDirs } from './helpers.js';
import { spawnEmulator, type SpawnedEmulator } from './spawn-emulator.js';

const AUTH = 'Basic ' + Buffer.from('emulator:emulator').toString('base64');
// registered first, so run last: the folders go once the processes are gone
const tmp = tempDirs('emu-crash-');
const children: SpawnedEmulator[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill9();
});

async function start(file: string, env: Record<string, string> = {}): Promise<SpawnedEmulator> {
  const c = await spawnEmulator(['--data', file], env);
  children.push(c);
  return c;
}

/**
 * Sends up to `total` SMS from `workers` concurrent senders and kills the emulator with
 * SIGKILL once `killAfter` have been acknowledged (the others are in flight then).
 * The acknowledged ones: hash -> body.
 */
async function sendThenKill(
  emu: SpawnedEmulator,
  total: number,
  workers: number,
  killAfter: number,
): Promise<Map<string, string>> {
  const acked = new Map<string, string>();
  let next = 0;
  let killed: Promise<void> | undefined;
  const worker = async () => {
    while (next < total && !killed) {
      const body = `message ${next++} ${'x'.repeat(next % 50)}`;
      try {
        const res = await fetch(`${emu.base}/rest/v1.1/sms`, {
          method: 'POST',
          headers: { authorization: AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ from: 'Acme', to: '+33612345678', body }),
        });
        const json = (await res.json()) as { status: string; data: string };
        if (res.status === 200 && json.status === 'success') acked.set(json.data, body);
      } catch {
        // the connection died with the process: not acknowledged
      }
      if (acked.size >= killAfter) killed ??= emu.kill9();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  await (killed ?? emu.kill9());
  return acked;
}

async function allSms(base: string): Promise<Map<string, string>> {
  const q = new URLSearchParams({ type: 'OUT', from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' });
  const res = await fetch(`${base}/rest/v1.1/sms?${q}`, { headers: { authorization: AUTH } });
  const json = (await res.json()) as { data: { hash: string; text: string }[] };
  return new Map(json.data.map((s) => [s.hash, s.text]));
}

function expectKept(acked: Map<string, string>, stored: Map<string, string>) {
  const lost = [...acked.keys()].filter((h) => stored.get(h) !== acked.get(h));
  expect(lost, `${lost.length} of ${acked.size} acknowledged SMS lost or changed`).toEqual([]);
  expect(stored.size).toBeGreaterThanOrEqual(acked.size);
}

async function call(
  base: string,
  path: string,
  method: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { authorization: AUTH };
  if (body !== undefined)
    headers['content-type'] = path.startsWith('/json-rpc') ? 'application/json-rpc; charset=utf-8' : 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const newDir = () => {
  const dir = tmp();
  return { dir, file: join(dir, 'data.json') };
};

const temporaries = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

describe('--data after kill -9', () => {
  it.each([
    ['with the default compaction (none during the run: all in the journal)', {}, [1, 1]],
    [
      'with a compaction every 16 KiB of journal (several during the run)',
      { EMULATOR_DATA_COMPACT_BYTES: '16384' },
      [3, Infinity],
    ],
  ])(
    'keeps every acknowledged SMS, %s; twice in a row; no temporary file left',
    async (_n, env, [low, high]) => {
      const { dir, file } = newDir();
      const first = await sendThenKill(await start(file, env), 1000, 32, 200);
      expect(first.size).toBeGreaterThanOrEqual(200);
      // the start wrote generation 1; each compaction during the run one more
      const generation = JSON.parse(readFileSync(file, 'utf8')).generation as number;
      expect(generation).toBeGreaterThanOrEqual(low!);
      expect(generation).toBeLessThanOrEqual(high!);

      const again = await start(file, env);
      expectKept(first, await allSms(again.base));
      expect(temporaries(dir)).toEqual([]);
      const second = await sendThenKill(again, 1000, 32, 200);

      const third = await start(file, env);
      const stored = await allSms(third.base);
      expectKept(first, stored);
      expectKept(second, stored);
      expect(temporaries(dir)).toEqual([]);
      expect(await third.stop()).toBe(0);
      expect(temporaries(dir)).toEqual([]);
      // three emulators started and 2,000 SMS sent: 5 s on a quiet machine, 20 s once under load (the default
      // timeout, which it ran into): a bound for a hang, not a timing
    },
    90_000,
  );
});

describe('--data: every kind of change, a torn record, a clean stop', () => {
  it(
    'replays apps, SMS and their status, inbound SMS, DIDs, caller scripts, transcripts and a reset after kill ' + '-9',
    async () => {
      const { file } = newDir();
      const server = await fakeServer(() => ({ body: cmd('hangup', 1) }));
      try {
        const a = await start(file);
        const app = (
          await call(a.base, '/json-rpc/v1.1/', 'POST', {
            jsonrpc: '2.0',
            id: 1,
            method: 'apps.create',
            params: ['REALTIME10', 'desk', { url: server.url }],
          })
        ).json.result;
        const out = (await call(a.base, '/rest/v1.1/sms', 'POST', { from: 'Acme', to: '+33612345678', body: 'out' }))
          .json.data;
        expect(
          (await call(a.base, `/emulator/sms/${out}/status`, 'POST', { status: 'FAILED', error: 'UNKNOWN_SUBSCRIBER' }))
            .status,
        ).toBe(200);
        const inbound = (
          await call(a.base, '/emulator/sms/inbound', 'POST', { from: '+33612345678', to: '+33700000000', body: 'in' })
        ).json.hash;
        await call(a.base, '/emulator/dids/+442079460001', 'PUT', { app: app.hash });
        await call(a.base, '/emulator/dids/+442079460002', 'PUT', { app: app.hash });
        expect((await call(a.base, '/emulator/dids/+442079460002', 'DELETE')).status).toBe(204);
        await call(a.base, '/emulator/callers/+447700900001', 'PUT', {
          caller_text: 'call:\n  answer: BUSY\n',
          caller_file: 'busy.yaml',
        });
        await call(a.base, '/emulator/callers/+447700900002', 'PUT', { caller_text: 'name: gone\n' });
        expect((await call(a.base, '/emulator/callers/+447700900002', 'DELETE')).status).toBe(204);
        const t = (await call(a.base, '/emulator/calls', 'POST', { url: server.url })).json;
        const views = async (base: string) => ({
          apps: (
            await call(base, '/json-rpc/v1.1/', 'POST', { jsonrpc: '2.0', id: 1, method: 'apps.get_list', params: [] })
          ).json.result,
          out: (await call(base, `/rest/v1.1/sms/${out}`, 'GET')).json.data,
          inbound: (await call(base, `/rest/v1.1/sms/${inbound}`, 'GET')).json.data,
          dids: (await call(base, '/emulator/dids', 'GET')).json,
          callers: (await call(base, '/emulator/callers', 'GET')).json,
          call: (await call(base, `/emulator/calls/${t.id}`, 'GET')).json,
        });
        const before = await views(a.base);
        expect(before).toMatchObject({
          out: { status: 'FAILED', status_error: 'UNKNOWN_SUBSCRIBER' },
          inbound: { type: 'IN', text: 'in' },
          dids: { '+442079460001': app.hash },
          callers: { '+447700900001': 'busy.yaml' },
          call: { status: 'ended', ended_by: 'flow' },
        });
        await a.kill9();

        const b = await start(file);
        expect(await views(b.base)).toEqual(before);
        // the id generator went on: a new SMS gets a new hash
        const next = (await call(b.base, '/rest/v1.1/sms', 'POST', { from: 'Acme', to: '+33612345678', body: 'next' }))
          .json.data;
        expect([app.hash, out, inbound, t.id]).not.toContain(next);
        expect((await call(b.base, '/emulator/reset', 'POST', {})).status).toBe(200);
        const last = (
          await call(b.base, '/rest/v1.1/sms', 'POST', { from: 'Acme', to: '+33612345678', body: 'after the reset' })
        ).json.data;
        await b.kill9();

        const c = await start(file);
        expect((await call(c.base, '/emulator/health', 'GET')).json).toEqual({
          status: 'ok',
          apps: 0,
          sms: 1,
          calls: 0,
          live_calls: 0,
        });
        expect((await call(c.base, `/rest/v1.1/sms/${last}`, 'GET')).json.data.text).toBe('after the reset');
      } finally {
        await server.close();
      }
    },
  );

  it(
    'a torn last record: a log line, the rest kept; a clean stop then compacts (restart after compaction keeps ' +
      'everything)',
    async () => {
      const { file } = newDir();
      const journal = `${file}.journal`;
      const a = await start(file);
      const sent: string[] = [];
      for (const body of ['one', 'two', 'three'])
        sent.push((await call(a.base, '/rest/v1.1/sms', 'POST', { from: 'Acme', to: '+33612345678', body })).json.data);
      await a.kill9();
      const size = statSync(journal).size;
      const torn = encodeRecord({ ids: '1', op: 'sms', v: { hash: 'TORN0000' } }).slice(0, 25);
      appendFileSync(journal, torn);

      const b = await start(file);
      expect(b.output()).toContain(
        `${journal}: ignored an incomplete last record at byte ${size} (25 bytes; a crash during its write, ` +
          `before it was acknowledged)`,
      );
      expect([...(await allSms(b.base)).values()]).toEqual(['one', 'two', 'three']);
      sent.push(
        (await call(b.base, '/rest/v1.1/sms', 'POST', { from: 'Acme', to: '+33612345678', body: 'four' })).json.data,
      );
      expect(await b.stop()).toBe(0);
      // a clean stop compacts: everything in the data file, the journal is only its header
      const data = JSON.parse(readFileSync(file, 'utf8'));
      expect(data.sms.map((s: { hash: string }) => s.hash)).toEqual(sent);
      expect(readFileSync(journal, 'utf8')).toBe(headerRecord(data.generation));

      const c = await start(file);
      expect([...(await allSms(c.base)).values()]).toEqual(['one', 'two', 'three', 'four']);
      expect(c.output()).not.toContain('ignored');
    },
  );
});
