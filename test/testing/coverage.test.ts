import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as runTests } from '../../src/cli/test.js';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { Coverage, parseScenario, runCase, totalTransitionPercent } from '../../src/testing/index.js';

async function menuFlow() {
  const file = 'test/fixtures/scenarios/menu.yaml';
  const text = await readFile(file, 'utf8');
  return compileFlow(checkFlow(text, file).model!, text);
}

describe('coverage', () => {
  it('counts steps and transitions exactly', async () => {
    const flow = await menuFlow();
    const cov = new Coverage();
    const s = parseScenario(
      [
        'flow: menu',
        'cases:',
        '  - name: timeout twice',
        '    steps:',
        '      - expect: read',
        '        result: TIMEOUT',
        '      - expect: read',
        '        result: TIMEOUT',
        '      - expect: hangup',
        '  - name: sms',
        '    steps:',
        '      - expect: read',
        '        result: "2"',
        '      - expect: sms',
        '      - expect: hangup',
      ].join('\n'),
      't.yaml',
    );
    const hooks = cov.hooksFor(flow);
    for (const c of s.cases) expect(runCase(flow, c, { hooks }).ok).toBe(true);
    expect(cov.data).toEqual({
      flows: {
        menu: {
          steps: { ask: 3, one: 0, text: 1, check: 1, bye: 2 },
          transitions: {
            'ask:1': 0,
            'ask:2': 1,
            'ask:TIMEOUT': 2,
            'ask:TIMEOUT:then': 1,
            'one:default': 0,
            'text:default': 1,
            'text:error': 0,
            'check:case1': 1,
            'check:default': 0,
          },
          all: [
            'ask:1',
            'ask:2',
            'ask:TIMEOUT',
            'ask:TIMEOUT:then',
            'one:default',
            'text:default',
            'text:error',
            'check:case1',
            'check:default',
          ],
        },
      },
    });
    const [r] = cov.report();
    expect(r!.steps).toEqual({ covered: 4, total: 5, percent: 80 });
    expect(r!.transitions).toEqual({ covered: 5, total: 9, percent: 55.5 });
    expect(r!.missedTransitions.map((t) => `${t.key} ${t.pos?.line}`)).toEqual([
      'ask:1 8',
      'one:default 13',
      'text:error 18',
      'check:default 20',
    ]);
    expect(totalTransitionPercent([r!])).toBe(55.5);
  });
});

describe('coverage scope and thresholds (callscript test)', () => {
  const root = new URL('../..', import.meta.url).pathname;
  const flows = join(root, 'flows');
  const run = async (files: string[], flags: Record<string, string | boolean> = {}) => {
    let out = '';
    const code = await runTests(files, { flows, ...flags }, { write: (s: string) => (out += s) });
    return { code, lines: out.split('\n') };
  };
  const flowLines = (lines: string[]) =>
    lines.filter((l) => /^ {2}\S+ \(.*\): steps /.test(l)).map((l) => l.trim().split(' ')[0]);

  /** The first cases of support-line's scenarios: part of its transitions. */
  function partialSupportLine(): string {
    const text = readFileSync(join(flows, 'support-line.test.yaml'), 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'cov-'));
    const file = join(dir, 'partial.test.yaml');
    writeFileSync(
      file,
      text
        .split(/\n(?= {2}- name: )/)
        .slice(0, 3)
        .join('\n') + '\n',
    );
    return file;
  }

  it('reports only the flows the given scenario files test', async () => {
    const { code, lines } = await run([join(flows, 'voicemail.test.yaml')], { coverage: true });
    expect(flowLines(lines)).toEqual(['voicemail']);
    expect(code).toBe(0);
    const both = await run([join(flows, 'voicemail.test.yaml'), join(flows, 'reminder.test.yaml')], { coverage: true });
    expect(flowLines(both.lines)).toEqual(['reminder', 'voicemail']);
  });

  it('--min-coverage counts the tested flows only', async () => {
    const { code, lines } = await run([join(flows, 'voicemail.test.yaml')], { minCoverage: '100' });
    expect(lines.filter((l) => l.includes('under --min-coverage'))).toEqual([]);
    expect(code).toBe(0);
    const partial = await run([partialSupportLine()], { minCoverage: '90' });
    expect(partial.lines.find((l) => l.includes('under --min-coverage'))).toMatch(
      /^transition coverage \d+(\.\d)?% of support-line is under --min-coverage 90%$/,
    );
    expect(partial.code).toBe(1);
  });

  it('--min-coverage-per-flow fails on any tested flow under it, naming the flow and its figure', async () => {
    const file = partialSupportLine();
    const { code, lines } = await run([join(flows, 'voicemail.test.yaml'), file], { minCoveragePerFlow: '90' });
    expect(flowLines(lines)).toEqual(['support-line', 'voicemail']);
    const line = lines.find((l) => l.includes('support-line (')!)!;
    const [, percent, covered, total] = /transitions ([\d.]+)% \((\d+)\/(\d+)\)/.exec(line)!;
    expect(lines.filter((l) => l.includes('under --min-coverage'))).toEqual([
      `support-line: transition coverage ${percent}% (${covered}/${total}) is under --min-coverage-per-flow 90%`,
    ]);
    expect(lines.at(-2)).toMatch(/^\d+ passed, 0 failed$/);
    expect(code).toBe(1);
    // all together over 40%: --min-coverage 40 passes where --min-coverage-per-flow 90 does not
    const together = await run([join(flows, 'voicemail.test.yaml'), file], {
      minCoverage: '40',
      minCoveragePerFlow: '10',
    });
    expect(together.lines.filter((l) => l.includes('under --min-coverage'))).toEqual([]);
    expect(together.code).toBe(0);
    const over = await run([join(flows, 'voicemail.test.yaml'), file], { minCoverage: '99' });
    expect(over.lines.filter((l) => l.includes('under --min-coverage'))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^transition coverage [\\d.]+% over 2 flows \\(support-line ${percent}%, voicemail 100%\\) is ` +
            `under --min-coverage 99%$`,
        ),
      ),
    ]);
    expect(over.code).toBe(1);
  });

  it('refuses a threshold that is not a percentage, with exit code 2', async () => {
    for (const v of ['abc', '101', '']) {
      const { code, lines } = await run([join(flows, 'voicemail.test.yaml')], { minCoveragePerFlow: v });
      expect(lines[0]).toBe(`callscript test: --min-coverage-per-flow must be a number from 0 to 100, not "${v}"`);
      expect(code).toBe(2);
    }
  });
});
