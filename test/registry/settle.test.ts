/**
 * A flow file still being written is not published: readStableFlows waits until the files
 * have stayed unchanged for the settle window (server.reload_settle_ms, default 1 s), so a
 * writer pausing between two chunks does not get its first half served.
 */
import { mkdtempSync, writeFileSync, appendFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStableFlows } from '../../src/registry/load.js';

const HALF =
  'version: 1\nname: half\nstart: bye\nsteps:\n  bye: { say: "Goodbye.", next: end }\n  end: { hangup: {} }\n';
const REST = '  # the second chunk\n  extra: { say: "More.", next: end }\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('readStableFlows', () => {
  it(
    'does not take the first half of a file whose writer ' + 'pauses (300 ms) for less than the settle window',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'settle-'));
      const file = join(dir, 'half.yaml');
      writeFileSync(file, HALF);
      const read = readStableFlows(dir, 800);
      await sleep(300);
      appendFileSync(file, REST);
      expect(await read).toEqual([{ file, text: HALF + REST }]);
    },
  );

  it('reads at once files written longer ago than the settle window', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'settle-'));
    const file = join(dir, 'old.yaml');
    writeFileSync(file, HALF);
    const past = new Date(Date.now() - 60_000);
    utimesSync(file, past, past);
    // a settle window of 30 s (longer than the test may run): only the file's age can let this read return
    expect(await readStableFlows(dir, 30_000)).toEqual([{ file, text: HALF }]);
  });

  it('gives up (undefined) when the files keep changing for longer than it waits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'settle-'));
    const file = join(dir, 'busy.yaml');
    writeFileSync(file, HALF);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        appendFileSync(file, `# ${i}\n`);
        await sleep(30);
      }
    })();
    const got = await readStableFlows(dir, 200, 600);
    writing = false;
    await writer;
    expect(got).toBeUndefined();
  });
});
