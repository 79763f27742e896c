import { join } from 'node:path';
import { expect, it } from 'vitest';
import { test as runTests } from '../../src/cli/test.js';

const root = new URL('../..', import.meta.url).pathname;

it('the example flows scenarios pass and reach 100% of steps and transitions', async () => {
  let out = '';
  const code = await runTests(
    [join(root, 'flows')],
    { flows: join(root, 'flows'), coverage: true, minCoverage: '100' },
    { write: (s: string) => (out += s) },
  );
  expect(out).toMatch(/^\d+ passed, 0 failed$/m);
  for (const flow of [
    'appointments',
    'bank-line',
    'call-centre',
    'conference',
    'front-desk',
    'recording-consent',
    'reminder',
    'support-line',
    'voicemail',
  ]) {
    expect(out).toMatch(new RegExp(`${flow} \\(.*\\): steps 100% \\(\\d+/\\d+\\), transitions 100% \\(\\d+/\\d+\\)`));
  }
  expect(code).toBe(0);
});
