/**
 * Constructs of version 2 together: an http step whose branches play says (ok after the
 * exact statuses, timeout after error) and a read whose valid: else says a prompt of the
 * table. Each say must be its own branch's: the machine config and the engine's tables
 * number them in the same order.
 */
import { expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';

const DIR = 'test/fixtures/v2-mix';

it('plays the say of the branch taken, for every http outcome and a rejected input', async () => {
  let out = '';
  const code = await testCommand(
    [`${DIR}/says.test.yaml`],
    { flows: DIR, coverage: true },
    { write: (s: string) => (out += s) },
  );
  expect(out).toContain('5 passed, 0 failed');
  expect(out).toContain('says (test/fixtures/v2-mix/says.yaml): steps 100% (3/3), transitions 100% (9/9)');
  expect(code).toBe(0);
});
