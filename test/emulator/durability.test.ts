/**
 * --data durability with real processes: every SMS acknowledged before a kill -9 is there
 * after a restart, whether or not compactions ran meanwhile; no temporary file is left.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnEmulator, type SpawnedEmulator } from './spawn-emulator.js';

const AUTH = 'Basic ' + Buffer.from('emulator:emulator').toString('base64');
const dirs: string[] = [];
const children: SpawnedEmulator[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill9();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
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
async function sendThenKill(emu: SpawnedEmulator, total: number, workers: number, killAfter: number): Promise<Map<string, string>> {
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

const temporaries = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

describe('--data after kill -9', () => {
  it.each([
    ['with the default compaction (none during the run: all in the journal)', {}, [1, 1]],
    ['with a compaction every 16 KiB of journal (several during the run)', { EMULATOR_DATA_COMPACT_BYTES: '16384' }, [3, Infinity]],
  ])('keeps every acknowledged SMS, %s; twice in a row; no temporary file left', async (_n, env, [low, high]) => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-crash-'));
    dirs.push(dir);
    const file = join(dir, 'data.json');
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
  });
});
