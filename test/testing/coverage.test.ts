import { readFile } from 'node:fs/promises';
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
          all: ['ask:1', 'ask:2', 'ask:TIMEOUT', 'ask:TIMEOUT:then', 'one:default', 'text:default', 'text:error', 'check:case1', 'check:default'],
        },
      },
    });
    const [r] = cov.report();
    expect(r!.steps).toEqual({ covered: 4, total: 5, percent: 80 });
    expect(r!.transitions).toEqual({ covered: 5, total: 9, percent: 55.5 });
    expect(r!.missedTransitions.map((t) => `${t.key} ${t.pos?.line}`)).toEqual(['ask:1 8', 'one:default 13', 'text:error 18', 'check:default 20']);
    expect(totalTransitionPercent([r!])).toBe(55.5);
  });
});
