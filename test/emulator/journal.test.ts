/**
 * The --data journal in process: reading torn, corrupt, stale and newer journals, stale
 * temporary files, and a disk that fails (the change is refused, then saved by the next
 * write). The crash itself, with real processes, is in durability.test.ts.
 */
import type { FileHandle } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeDisk, type Disk } from '../../src/emulator/persist/files.js';
import { encodeRecord, headerRecord, scanJournal } from '../../src/emulator/persist/format.js';
import { createEmulator } from '../../src/emulator/server.js';
import { startEmulator, tempDirs } from './helpers.js';

const tmp = tempDirs('emu-journal-');
const fresh = () => {
  const d = tmp();
  return { dir: d, file: join(d, 'data.json'), journal: join(d, 'data.json.journal') };
};

const sms = (hash: string, text: string) => ({
  type: 'OUT',
  hash,
  from: 'Acme',
  to: '+33612345678',
  text,
  options: null,
  encoding: 'GSM',
  parts: 1,
  user_data: '',
  b_customer_debit: '0.0500',
  network: '20801',
  nature: 'ALERTING',
  created: Date.UTC(2026, 10, 23, 10, 0, 0),
  timeline: [{ status: 'CREATED', at: Date.UTC(2026, 10, 23, 10, 0, 0) }],
});
const smsRecord = (hash: string, text: string) => encodeRecord({ ids: '42', op: 'sms', v: sms(hash, text) });
const journalLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('the journal format', () => {
  const good = [headerRecord(0), smsRecord('AAAA0001', 'one'), smsRecord('AAAA0002', 'two')].join('');
  const len = Buffer.byteLength(good);

  it('reads every record with its offset', () => {
    const r = scanJournal(Buffer.from(good));
    expect(r.ok && r.scanned.records.map((x) => x.offset)).toEqual([
      0,
      Buffer.byteLength(headerRecord(0)),
      Buffer.byteLength(headerRecord(0) + smsRecord('AAAA0001', 'one')),
    ]);
    expect(r.ok && r.scanned.torn).toBeUndefined();
  });

  it.each([
    ['cut short (no newline)', smsRecord('AAAA0003', 'three').slice(0, 40)],
    ['a whole line that does not match its checksum', smsRecord('AAAA0003', 'three').replace('three', 'THREE')],
    ['zeros (a power loss)', '\0'.repeat(4096)],
    ['two damaged records', smsRecord('AAAA0003', 'x').replace('x', 'y') + 'garbage\n'],
  ])('a torn tail: %s', (_n, tail) => {
    const r = scanJournal(Buffer.from(good + tail));
    expect(r).toEqual({
      ok: true,
      scanned: { records: expect.any(Array), torn: { offset: len, bytes: Buffer.byteLength(tail) } },
    });
    expect(r.ok && r.scanned.records).toHaveLength(3);
  });

  it('a damaged record followed by a good one is corruption, at its offset', () => {
    const bad = smsRecord('AAAA0003', 'three').replace('three', 'thre3');
    expect(scanJournal(Buffer.from(good + bad + smsRecord('AAAA0004', 'four')))).toEqual({
      ok: false,
      offset: len,
      reason: 'the record does not match its checksum, and good records follow it',
    });
  });
});

describe('--data at start', () => {
  it(
    'replays the journal; drops a torn last record with a ' + 'log line; the journal is written anew without it',
    async () => {
      const { file, journal } = fresh();
      const head = headerRecord(0) + smsRecord('AAAA0001', 'one') + smsRecord('AAAA0002', 'two');
      writeFileSync(journal, head + smsRecord('AAAA0003', 'three').slice(0, 30));
      const e = await startEmulator({ dataFile: file });
      try {
        expect([...e.emu.ctx.store.sms.keys()]).toEqual(['AAAA0001', 'AAAA0002']);
        expect(e.emu.ctx.store.ids.stateText).toBe('42');
        // the torn bytes are gone: the state went to the data file, the journal is only a header
        expect(journalLines(journal)).toEqual([headerRecord(1).trim()]);
        expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
          generation: 1,
          ids: '42',
          sms: [{ hash: 'AAAA0001' }, { hash: 'AAAA0002' }],
        });
        expect((await e.req('/rest/v1.1/sms/AAAA0002')).json.data.text).toBe('two');
      } finally {
        await e.close();
      }
    },
  );

  it(
    'stops on a corrupt record in the middle, naming the ' + 'file and the offset, and leaves the files alone',
    async () => {
      const { file, journal } = fresh();
      const before = headerRecord(0) + smsRecord('AAAA0001', 'one');
      const text = before + smsRecord('AAAA0002', 'two').replace('two', 'tw0') + smsRecord('AAAA0003', 'three');
      writeFileSync(journal, text);
      await expect(createEmulator({ dataFile: file, logLevel: false })).rejects.toThrow(
        `${journal}: corrupt record at byte ${Buffer.byteLength(before)}: the record does not match its ` +
          `checksum, and good records follow it. The journal cannot be trusted: restore ${file} and ${journal} ` +
          `from a backup, or move the journal away to start from ${file} alone (the changes it holds are then ` +
          `lost)`,
      );
      expect(readFileSync(journal, 'utf8')).toBe(text);
      expect(existsSync(file)).toBe(false);
    },
  );

  it('stops on a record that matches its checksum but is not a change', async () => {
    const { file, journal } = fresh();
    const before = headerRecord(0);
    writeFileSync(journal, before + encodeRecord({ ids: '1', op: 'drop_table' }));
    await expect(createEmulator({ dataFile: file, logLevel: false })).rejects.toThrow(
      `${journal}: corrupt record at byte ${Buffer.byteLength(before)}: unknown change "drop_table".`,
    );
  });

  it(
    'does not replay a journal older than the data file (a ' + 'crash between the two renames of a compaction)',
    async () => {
      const { file, journal } = fresh();
      writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          generation: 3,
          ids: '7',
          apps: [],
          sms: [sms('AAAA0001', 'kept')],
          calls: [],
          dids: {},
          callers: {},
        }),
      );
      writeFileSync(
        journal,
        headerRecord(2) + smsRecord('AAAA0001', 'older') + smsRecord('AAAA0002', 'in the data file already'),
      );
      const e = await startEmulator({ dataFile: file });
      try {
        expect([...e.emu.ctx.store.sms.values()].map((s) => s.text)).toEqual(['kept']);
        expect(e.emu.ctx.store.ids.stateText).toBe('7');
        expect(journalLines(journal)).toEqual([headerRecord(4).trim()]);
      } finally {
        await e.close();
      }
    },
  );

  it('refuses a journal newer than the data file (the data file was replaced)', async () => {
    const { file, journal } = fresh();
    writeFileSync(
      file,
      JSON.stringify({ version: 1, generation: 1, ids: '7', apps: [], sms: [], calls: [], dids: {}, callers: {} }),
    );
    writeFileSync(journal, headerRecord(2));
    await expect(createEmulator({ dataFile: file, logLevel: false })).rejects.toThrow(
      `${journal} continues generation 2 of ${file}, but ${file} is from generation 1: the data file was ` +
        `replaced or lost. Restore the matching ${file}, or move the journal away to start from ${file} alone`,
    );
  });

  it('removes the temporary files a crash left beside the data file, and only those', async () => {
    const { dir, file } = fresh();
    for (const n of ['data.json.4242.3.tmp', 'data.json.journal.4242.4.tmp', 'other.json.1.1.tmp', 'data.json.bak'])
      writeFileSync(join(dir, n), 'x');
    const e = await startEmulator({ dataFile: file });
    await e.close();
    expect(readdirSync(dir).sort()).toEqual(['data.json', 'data.json.bak', 'data.json.journal', 'other.json.1.1.tmp']);
  });

  it('an old data file without journal (before the journal existed) loads and goes on', async () => {
    const { file, journal } = fresh();
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        ids: '7',
        apps: [],
        sms: [sms('AAAA0001', 'old')],
        calls: [],
        dids: {},
        callers: {},
      }),
    );
    const e = await startEmulator({ dataFile: file });
    try {
      expect((await e.req('/rest/v1.1/sms/AAAA0001')).json.data.text).toBe('old');
      expect(journalLines(journal)).toEqual([headerRecord(1).trim()]);
    } finally {
      await e.close();
    }
  });
});

/** node:fs/promises, except that fsync fails with EIO while `failing` is set. */
function failingDisk(): { disk: Disk; fail(on: boolean): void } {
  let failing = false;
  const eio = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
  const disk: Disk = {
    ...nodeDisk,
    open: async (path, flags) => {
      const fh = await nodeDisk.open(path, flags);
      return {
        appendFile: (d: string, enc: BufferEncoding) => fh.appendFile(d, enc),
        writeFile: (d: string, enc: BufferEncoding) => fh.writeFile(d, enc),
        datasync: () => (failing ? eio() : fh.datasync()),
        sync: () => (failing ? eio() : fh.sync()),
        close: () => fh.close(),
      } as unknown as FileHandle;
    },
  };
  return { disk, fail: (on) => (failing = on) };
}

describe('a disk that fails', () => {
  it("refuses the change in each API's error shape; the next write saves the whole state again", async () => {
    const { file, journal } = fresh();
    const d = failingDisk();
    const e = await startEmulator({ dataFile: file, disk: d.disk });
    const SMS = { from: 'Acme', to: '+33612345678', body: 'hi' };
    try {
      const first = (await e.req('/rest/v1.1/sms', { body: SMS })).json.data as string;
      d.fail(true);
      const message = `the emulator could not write its data file ${file} (EIO); the change may or may not be kept`;
      const rest = await e.req('/rest/v1.1/sms', { body: SMS });
      expect([rest.status, rest.json]).toEqual([503, { status: 'error', data: { code: 2, message } }]);
      expect(await e.rpc('sms.send', ['Acme', '+33612345678', 'hi', null], 5)).toEqual({
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32000, message },
      });
      const control = await e.req('/emulator/callers/+447700900456', {
        method: 'PUT',
        body: { caller_text: 'name: x\n' },
      });
      expect([control.status, control.json]).toEqual([503, { error: { code: 'STORAGE', message } }]);
      // while changes are unsaved, any answer (a read, a refusal) tries again, and fails too
      expect((await e.req(`/rest/v1.1/sms/${first}`)).status).toBe(503);
      expect((await e.req('/emulator/dids/+442079460999', { method: 'PUT', body: { app: 'NOAPP000' } })).json).toEqual({
        error: { code: 'STORAGE', message },
      });

      d.fail(false);
      const after = await e.req('/rest/v1.1/sms', { body: SMS });
      expect(after.status).toBe(200);
      // that write was a compaction: the data file holds everything, the journal is new
      const data = JSON.parse(readFileSync(file, 'utf8'));
      expect(data.sms).toHaveLength(4);
      expect(Object.keys(data.callers)).toEqual(['+447700900456']);
      expect(journalLines(journal)).toEqual([headerRecord(data.generation).trim()]);
      expect((await e.req(`/rest/v1.1/sms/${first}`)).status).toBe(200);
    } finally {
      await e.close();
    }
    const again = await startEmulator({ dataFile: file });
    try {
      expect(again.emu.ctx.store.sms.size).toBe(4);
    } finally {
      await again.close();
    }
  });
});
