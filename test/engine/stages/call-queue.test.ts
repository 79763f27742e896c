/** The per-callid queue (src/engine/call-queue.ts). */
import { describe, expect, it } from 'vitest';
import { CallQueue } from '../../../src/engine/call-queue.js';

describe('CallQueue', () => {
  it("runs a call's requests one at a time, in order; other calls go on; a failure does not block", async () => {
    const q = new CallQueue();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = q.run('1', async () => {
      log.push('1a start');
      await gate;
      log.push('1a end');
      throw new Error('1a failed');
    });
    const second = q.run('1', async () => void log.push('1b'));
    const other = q.run('2', async () => void log.push('2'));
    await other;
    await new Promise((r) => setImmediate(r)); // the queue forgets a call once its last request is done
    expect(log).toEqual(['1a start', '2']);
    expect([q.has('1'), q.has('2')]).toEqual([true, false]);
    release();
    await expect(first).rejects.toThrow('1a failed');
    await second;
    expect(log).toEqual(['1a start', '2', '1a end', '1b']);
    await new Promise((r) => setImmediate(r));
    expect(q.has('1')).toBe(false);
  });
});
