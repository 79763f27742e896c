/**
 * `callscript validate` over every environment of version 2 flows, and `--env`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/cli/validate.js';

function capture(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(chunk, _e, cb) {
        s += chunk.toString();
        cb();
      },
    }),
    text: () => s,
  };
}

/** A flow with `n` environments (the one numbered `bad` with an implausible number). */
function envFlow(n: number, bad?: number): string {
  const envs = Array.from(
    { length: n },
    (_, i) =>
      `  env${i}: { support: "${i === bad ? '+4420' : `+4420794600${String(i).padStart(2, '0')}`}", api: ` +
      `"https://api${i}.example" }`,
  );
  return [
    'version: 2',
    'start: a',
    'environments:',
    ...envs,
    'steps:',
    '  a:',
    '    dialout: { targets: ["{{ env.support }}"] }',
    '    on: { NOANSWER: b }',
    '  b: { say: "Call {{ env.support }} or visit {{ env.api }}.", next: c }',
    '  c: { hangup: {} }',
    '',
  ].join('\n');
}

describe('callscript validate with environments', () => {
  it('checks every environment: the one with a bad number is named, at the param', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-env-'));
    const file = join(d, 'line.yaml');
    writeFileSync(file, envFlow(50, 37));
    const c = capture();
    const t0 = performance.now();
    expect(await validate([d], c.out)).toBe(1);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(c.text()).toContain(
      `${file}:56:26 error BAD_FORMAT step 'a': target: number in environment env37 is "+4420": not a ` +
        `possible phone number for its country code\n`,
    );
    expect(c.text().trimEnd().split('\n').at(-1)).toBe('1 file checked, 0 valid: 1 error, 0 warnings');
  });

  it('50 clean environments: no problems, fast; --env names one the flow must have', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-env-'));
    writeFileSync(join(d, 'line.yaml'), envFlow(50));
    const c = capture();
    const t0 = performance.now();
    expect(await validate([d], c.out)).toBe(0);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(c.text()).toBe('1 file checked, 1 valid: no problems\n');
    const c2 = capture();
    expect(await validate([d], c2.out, { env: 'env49' })).toBe(0);
    const c3 = capture();
    expect(await validate([d], c3.out, { env: 'env50' })).toBe(1);
    expect(c3.text()).toContain(
      "3:1 error UNKNOWN_ENVIRONMENT the environment 'env50' is selected (--env, environment: or " +
        'CALLSCRIPT_ENV), and this flow has no such environment\n',
    );
  });
});
