/**
 * The store's faults as its operations meet them (src/store/faults.ts), on a clock of the
 * test's: writes refused stand until a write succeeds, other faults until any operation does;
 * `since` is kept while the same fault goes on. And how a Redis error is told (faultOf).
 */
import { describe, expect, it } from 'vitest';
import { StoreFaults } from '../../src/store/faults.js';
import { faultOf } from '../../src/store/redis.js';

function faults() {
  const clock = { t: 1_000 };
  return { clock, f: new StoreFaults(() => clock.t) };
}

const OOM = { kind: 'writes_refused', code: 'OOM', message: 'Redis: OOM command not allowed' } as const;
const TIMEOUT = { kind: 'timeout', message: 'Redis: Command timed out' } as const;

describe('StoreFaults', () => {
  it('writes refused: stand through reads and pings, until a write succeeds; since kept while it goes on', () => {
    const { clock, f } = faults();
    expect(f.current()).toBeUndefined();
    f.met(OOM);
    clock.t = 2_000;
    f.served(false); // a read or a ping: the store answers, it still takes no write
    f.met(OOM);
    expect(f.current()).toEqual({ ...OOM, since: 1_000, at: 2_000 });
    clock.t = 3_000;
    f.served(true);
    expect(f.current()).toBeUndefined();
    clock.t = 4_000;
    f.met(OOM);
    expect(f.current()).toEqual({ ...OOM, since: 4_000, at: 4_000 });
  });

  it('another fault: until any operation succeeds', () => {
    const { clock, f } = faults();
    f.met(TIMEOUT);
    clock.t = 1_500;
    f.met({ kind: 'unreachable', code: 'ECONNREFUSED', message: 'Redis: connect ECONNREFUSED' });
    expect(f.current()).toEqual({
      kind: 'unreachable',
      code: 'ECONNREFUSED',
      message: 'Redis: connect ECONNREFUSED',
      since: 1_500,
      at: 1_500,
    });
    f.served(false);
    expect(f.current()).toBeUndefined();
  });

  it('both standing: the later one', () => {
    const { clock, f } = faults();
    f.met(OOM);
    clock.t = 2_000;
    f.met(TIMEOUT);
    expect(f.current()).toMatchObject({ kind: 'timeout', since: 2_000 });
    clock.t = 3_000;
    f.met(OOM);
    expect(f.current()).toMatchObject({ kind: 'writes_refused', since: 1_000, at: 3_000 });
    f.served(false);
    expect(f.current()).toMatchObject({ kind: 'writes_refused' });
  });

  it('wroteWithin: a write succeeded lately and no fault since', () => {
    const { clock, f } = faults();
    expect(f.wroteWithin(5_000)).toBe(false); // no write yet
    f.served(true);
    clock.t = 6_000;
    expect(f.wroteWithin(5_000)).toBe(true);
    clock.t = 6_001;
    expect(f.wroteWithin(5_000)).toBe(false);
    f.served(true);
    f.met(TIMEOUT);
    expect(f.wroteWithin(5_000)).toBe(false);
  });
});

describe('faultOf: a Redis error told', () => {
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  const SHA = '55d9baee4384c45bdfd2764abdc47e21886ac370';

  it('writes refused: OOM, READONLY, NOREPLICAS, MISCONF, from a script (Redis 7 and 6) or a command', () => {
    expect(
      faultOf(reply(`OOM command not allowed when used memory > 'maxmemory'. script: ${SHA}, on @user_script:10.`)),
    ).toEqual({
      kind: 'writes_refused',
      code: 'OOM',
      message: "Redis: OOM command not allowed when used memory > 'maxmemory'.",
    });
    expect(faultOf(reply("READONLY You can't write against a read only replica."))).toMatchObject({
      kind: 'writes_refused',
      code: 'READONLY',
    });
    expect(
      faultOf(reply('ERR Error running script (call to f_1): @user_script:10: -NOREPLICAS Not enough good replicas')),
    ).toMatchObject({ kind: 'writes_refused', code: 'NOREPLICAS' });
    expect(faultOf(reply('MISCONF Redis is configured to save RDB snapshots'))).toMatchObject({
      kind: 'writes_refused',
      code: 'MISCONF',
    });
  });

  it('another reply, a timeout, a connection', () => {
    expect(faultOf(reply('LOADING Redis is loading the dataset in memory'))).toEqual({
      kind: 'error',
      code: 'LOADING',
      message: 'Redis: LOADING Redis is loading the dataset in memory',
    });
    expect(faultOf(new Error('Command timed out'))).toEqual({ kind: 'timeout', message: 'Redis: Command timed out' });
    expect(faultOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toEqual({
      kind: 'unreachable',
      code: 'ECONNREFUSED',
      message: 'Redis: connect ECONNREFUSED 127.0.0.1:1',
    });
    expect(faultOf(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toMatchObject({
      kind: 'unreachable',
    });
  });
});
