/**
 * Spoken formats through the step function (the scenario runner's): a fr-FR call hears the amount, the date, the
 * duration and the date filter's names in French from the prompt table, an en-GB call in English; the same flow,
 * the call's language chosen by the caller's country (test/fixtures/spoken/bill.yaml and its scenarios).
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { parseScenario, runCase } from '../../src/testing/index.js';
import { test as testCommand } from '../../src/cli/test.js';

const DIR = 'test/fixtures/spoken';

function bill() {
  const text = readFileSync(`${DIR}/bill.yaml`, 'utf8');
  const { model, diagnostics } = checkFlow(text, `${DIR}/bill.yaml`);
  expect(diagnostics).toEqual([]);
  return compileFlow(model!, text);
}

const cases = parseScenario(readFileSync(`${DIR}/bill.test.yaml`, 'utf8'), `${DIR}/bill.test.yaml`).cases;

it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  const r = runCase(bill(), c);
  expect(r.failure).toBeUndefined();
  expect(r.ok).toBe(true);
});

it('the French media, byte for byte (no-break spaces where French writes them)', () => {
  const fr = cases[0]!.steps[0]!.expect as unknown as { params: { media_id: string } };
  expect(fr.params.media_id).toBe(
    'TTS|TTS_FR-FR_AUDREY|Vous devez 1\u202f234,50\u00a0€, à régler le jeudi 4 décembre.',
  );
});

it('callscript test passes the scenarios, with full coverage', async () => {
  let out = '';
  const code = await testCommand(
    [`${DIR}/bill.test.yaml`],
    { flows: DIR, coverage: true },
    { write: (s: string) => (out += s) },
  );
  expect(out).toContain('2 passed, 0 failed');
  expect(code).toBe(0);
});
