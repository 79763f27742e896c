/**
 * Big flows (issue #8): a generated flow of 10,000 steps checks with no diagnostic, and
 * the checks that used to grow faster than the flow (the loop a trap leads to, the
 * did-you-mean among thousands of step ids) stay linear. Time bounds are CPU time and
 * generous on purpose (CI machines are shared and slow): they catch a quadratic cost,
 * which took minutes here, not a slow machine. `npm run bench:big` measures.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';

/**
 * 10,000 steps take more than the default 2 MiB file size limit: these flows are checked with a server's raised
 * limits.flow_file_bytes.
 */
const LARGE_FILES = { maxFileBytes: 16 * 1024 * 1024 };
import { bigFlow } from '../helpers/big-flow.js';

const BIG = 120_000; // vitest timeout of these tests

/** `f`'s result and the CPU time it took (less sensitive than wall time to a busy machine). */
function timed<T>(f: () => T): { value: T; ms: number } {
  const c0 = process.cpuUsage();
  const value = f();
  const c = process.cpuUsage(c0);
  return { value, ms: (c.user + c.system) / 1000 };
}

describe('a 10,000-step flow', () => {
  it('the generator writes what it says', () => {
    const text = bigFlow(3);
    expect(text).toBe(
      [
        'version: 1',
        'name: big',
        'description: A generated flow of 3 steps.',
        'start: menu_0',
        'steps:',
        '  menu_0:',
        '    read:',
        '      prompt: "Menu 0. For the next menu press 1, to skip one press 2, to go back press 3."',
        '      max_digits: 1',
        '      timeout_ms: 5000',
        '    on:',
        '      "1": { goto: menu_1, say: "Next." }',
        '      "2": { goto: goodbye, say: "Skipping one." }',
        '      "3": { goto: menu_0, say: "Going back." }',
        '      default: { goto: goodbye, say: "Sorry, goodbye." }',
        '  menu_1:',
        '    read:',
        '      prompt: "Menu 1. For the next menu press 1, to skip one press 2, to go back press 3."',
        '      max_digits: 1',
        '      timeout_ms: 5000',
        '    on:',
        '      "1": { goto: goodbye, say: "Next." }',
        '      "2": { goto: goodbye, say: "Skipping one." }',
        '      "3": { goto: menu_0, say: "Going back." }',
        '      default: { goto: goodbye, say: "Sorry, goodbye." }',
        '  goodbye:',
        '    hangup: {}',
        '',
      ].join('\n'),
    );
    expect(checkFlow(text, 'big.yaml', LARGE_FILES).diagnostics).toEqual([]);
  });

  it(
    'checks with no diagnostic at all, well within 30 s of CPU',
    () => {
      const text = bigFlow(10_000);
      const { value: r, ms } = timed(() => checkFlow(text, 'big.yaml', LARGE_FILES));
      expect(r.diagnostics).toEqual([]);
      expect(Object.keys(r.model!.steps)).toHaveLength(10_000);
      const last = r.model!.steps.menu_9998!;
      expect(last.kind === 'command' && last.on.exact['1']).toMatchObject({
        goto: 'goodbye',
        say: [{ kind: 'tts', text: 'Next.' }],
      });
      expect(ms).toBeLessThan(30_000);
    },
    BIG,
  );

  it(
    'with no way to end the call: one NO_PATH_TO_END, where the trap is entered',
    () => {
      const text = bigFlow(10_000)
        .replace(/default: \{ goto: goodbye/g, 'default: { goto: menu_0')
        .replace('  goodbye:\n    hangup: {}', '  goodbye:\n    say: "Bye."\n    next: menu_0');
      const { value: r, ms } = timed(() => checkFlow(text, 'trap.yaml', LARGE_FILES));
      expect(r.diagnostics.map((d) => `${d.code}@${d.line}:${d.column} ${d.message}`)).toEqual([
        "NO_PATH_TO_END@6:3 step 'menu_0' can never reach the end of the call: every way out of it loops " +
          "back (it only leads to 'menu_1', 'menu_2', 'menu_3', 'menu_4', 'menu_5', ...)",
      ]);
      expect(ms).toBeLessThan(30_000);
    },
    BIG,
  );

  it(
    'with 2,998 misspelt step ids among 3,000 steps: one UNKNOWN_STEP each, suggestions while the budget lasts',
    () => {
      const text = bigFlow(3_000).replace(/"1": \{ goto: menu_(\d+)/g, '"1": { goto: mneu_$1');
      const { value: r, ms } = timed(() => checkFlow(text, 'typos.yaml', LARGE_FILES));
      expect(r.diagnostics).toHaveLength(2_998); // menu_2998's "1" goes to goodbye
      expect(new Set(r.diagnostics.map((d) => d.code))).toEqual(new Set(['UNKNOWN_STEP']));
      const first = r.diagnostics[0]!;
      expect([first.line, first.column, first.message, first.hint]).toEqual([
        12,
        20,
        "no step 'mneu_1' in this flow",
        "did you mean 'menu_1'?",
      ]);
      // each misspelt id is compared with 3,000 ids: the budget runs out before the end
      expect(r.diagnostics.at(-1)!.hint).toMatch(/^Steps are: menu_0, menu_1, /);
      expect(ms).toBeLessThan(30_000);
    },
    BIG,
  );
});
