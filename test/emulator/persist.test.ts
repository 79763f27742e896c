/** --data: everything survives a restart; the file is written atomically; bad files are refused. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ids } from '../../src/emulator/ids.js';
import { createEmulator } from '../../src/emulator/server.js';
import { cmd, fakeServer, startEmulator, tempDirs } from './helpers.js';

const tmp = tempDirs('emu-data-');

describe('persistence with --data', () => {
  it(
    'apps, SMS (with their timeline), transcripts, DIDs, ' + 'caller scripts and the id generator survive a restart',
    async () => {
      const file = join(tmp(), 'emulator.json');
      const server = await fakeServer(() => ({ body: cmd('hangup', 1) }));
      let now = Date.UTC(2026, 10, 23, 10, 0, 0);
      const clock = { now: () => now };
      const a = await startEmulator({ dataFile: file, clock });
      const app = (await a.rpc('apps.create', ['REALTIME10', 'desk', { url: server.url }])).result;
      const sms = (await a.req('/rest/v1.1/sms', { body: { from: 'Acme', to: '+33612345678', body: 'Hello' } })).json
        .data;
      const t = await a.call({ url: server.url });
      await a.req('/emulator/dids/+442079460999', { method: 'PUT', body: { app: app.hash } });
      await a.req('/emulator/callers/+447700900456', {
        method: 'PUT',
        body: { caller_text: 'call:\n  answer: BUSY\n', caller_file: 'busy.yaml' },
      });
      await a.close();
      expect(existsSync(file)).toBe(true);
      expect(readdirSync(join(file, '..')).filter((f) => f.endsWith('.tmp'))).toEqual([]);

      now += 10_000;
      const b = await startEmulator({ dataFile: file, clock });
      try {
        expect((await b.rpc('apps.get_list', [])).result).toEqual([app]);
        const again = (await b.req(`/rest/v1.1/sms/${sms}`)).json.data;
        expect(again).toMatchObject({
          hash: sms,
          text: 'Hello',
          status: 'RECEIVED',
          date_creation: '2026-11-23 10:00:00',
          date_received: '2026-11-23 10:00:03',
        });
        expect((await b.req(`/emulator/calls/${t.id}`)).json).toEqual(t);
        expect((await b.req('/emulator/dids')).json).toEqual({ '+442079460999': app.hash });
        expect((await b.req('/emulator/callers')).json).toEqual({ '+447700900456': 'busy.yaml' });
        // the registered script is used after the restart, and new ids are new
        const id = (await b.rpc('calls.realtime', [app.hash, { number: '+447700900456', timeout: 30 }])).result;
        expect([app.hash, sms, t.id]).not.toContain(id);
        await Promise.allSettled([...b.emu.ctx.background]);
        expect((await b.req(`/emulator/calls/${id}`)).json).toMatchObject({
          ended_by: 'not_answered',
          final: { call_status: 'BUSY' },
        });
        const t2 = await b.call({ url: server.url });
        expect(t2.callid).not.toBe(t.callid);
      } finally {
        await b.close();
        await server.close();
      }
      const data = JSON.parse(readFileSync(file, 'utf8'));
      expect(Object.keys(data)).toEqual([
        'version',
        'generation',
        'ids',
        'apps',
        'sms',
        'calls',
        'dids',
        'callers',
        'hooks',
      ]);
      expect(data.calls).toHaveLength(3);
    },
  );

  it('a missing file starts empty and is created; a reset empties it', async () => {
    const file = join(tmp(), 'new.json');
    const e = await startEmulator({ dataFile: file });
    await e.req('/rest/v1.1/sms', { body: { from: 'Acme', to: '+33612345678', body: 'x' } });
    expect((await e.req('/emulator/reset', { body: {} })).json).toEqual({ status: 'ok' });
    await e.close();
    expect(JSON.parse(readFileSync(file, 'utf8')).sms).toEqual([]);
  });

  it.each([
    ['not JSON', '{"version": 1,', /not valid JSON .*; fix or remove the file/],
    ['another version', '{"version": 9}', /not an emulator data file: unknown data version 9/],
    [
      'a wrong shape',
      '{"version": 1, "ids": "1", "apps": {}, "sms": [], "calls": [], "dids": {}, "callers": {}}',
      /field apps must be an array/,
    ],
  ])('refuses to start on a data file that is %s (and leaves it alone)', async (_n, content, re) => {
    const file = join(tmp(), 'bad.json');
    writeFileSync(file, content);
    await expect(createEmulator({ dataFile: file, logLevel: false })).rejects.toThrow(re);
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it('refuses a SQLite file name', async () => {
    await expect(createEmulator({ dataFile: join(tmp(), 'data.sqlite'), logLevel: false })).rejects.toThrow(
      /SQLite data files are not supported; give a .json file/,
    );
  });
});

describe('ids', () => {
  it('are reproducible from a seed, and a state restarts where it stopped', () => {
    const a = new Ids('seed');
    const b = new Ids('seed');
    const first = [a.hash(), a.callid(), a.hex(8)];
    expect([b.hash(), b.callid(), b.hex(8)]).toEqual(first);
    const c = new Ids(a.stateText);
    expect(c.callid()).toBe(a.callid());
    expect(new Ids('other').hash()).not.toBe(first[0]);
  });

  it('hashes are 8 upper-case letters and digits; callids cover the 64-bit range, some above 2^53', () => {
    const ids = new Ids('range');
    for (let i = 0; i < 200; i++) expect(ids.hash()).toMatch(/^[A-Z0-9]{8}$/);
    const callids = Array.from({ length: 2000 }, () => BigInt(ids.callid()));
    expect(callids.every((c) => c >= 1n && c <= 18446744073709551615n)).toBe(true);
    const big = callids.filter((c) => c > 2n ** 53n).length;
    expect(big).toBeGreaterThan(200);
    expect(callids.filter((c) => c > 2n ** 63n).length).toBeGreaterThan(10);
    expect(callids.filter((c) => c < 2n ** 32n).length).toBeGreaterThan(800);
    expect(ids.hash((h) => h.startsWith('A') || h.startsWith('B'))).toMatch(/^[^AB]/);
  });
});
