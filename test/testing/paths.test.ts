import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { replyCommand } from '../../src/engine/advance.js';
import { compileAll } from '../../src/registry/registry.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import type { RtRequest } from '../../src/protocol/rt.js';
import { generateCases, sampleFor, scenarioYaml, transitionIds, uncovered, type GeneratedCase } from '../../src/testing/paths.js';
import { Call, cmd, flow, hangup, say, sw } from '../engine/helpers.js';

const dir = 'flows';
const flows = compileAll(readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml')).map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') }))).flows;

/** Drives a generated case through the engine; returns the engine's step after the claimed transition. */
function drive(f: CompiledFlow, c: GeneratedCase): { commands: string[]; afterClaim: string | undefined } {
  const call = new Call(f);
  const sms = [...c.mocksSms];
  call.effectResult = () => {
    const m = sms.shift() ?? { hash: 'SMS00001' };
    return 'hash' in m ? { ok: true, value: m.hash } : { ok: false, error: m.error };
  };
  const commands: string[] = [];
  let afterClaim: string | undefined;
  call.start();
  const lastOfClaim = c.steps.reduce((acc, s, i) => (s.edge < c.claimAt ? i : acc), -1);
  c.steps.forEach((s, i) => {
    if (typeof s.expect !== 'string') return; // an sms effect: performed within the request
    const cmd = call.state ? replyCommand(call.state.reply) : 'none';
    commands.push(cmd);
    expect(cmd, `${c.transition}: step ${i}`).toBe(s.expect);
    if (s.expect === 'hangup') return;
    if (s.status) call.send(call.next({ call_status: s.status as RtRequest['call_status'] }));
    else if (s.error) call.error(s.error);
    else call.result(s.result ?? (s.expect === 'read' ? '1' : s.expect === 'dialout' ? 'NOANSWER' : '0'));
    if (i === lastOfClaim) afterClaim = call.state?.step;
  });
  return { commands, afterClaim };
}

describe('callscript paths', () => {
  it('samples results for patterns', () => {
    expect(sampleFor('^[0-9]{4}$')).toBe('0000');
    expect(sampleFor('^1[0-9][0-9]$')).toBe('100');
    expect(sampleFor('^(yes|no)$')).toBe('yes');
    expect(sampleFor('^\\d+#$')).toBe('0#');
  });

  it('lists every branch key, retry, exhausted retry and switch case as a transition', () => {
    const f = flow({
      steps: {
        route: sw([['vars.x == 1', 'menu']], 'menu'),
        menu: cmd('read', { max_digits: 4 }, { on: { '1': 'bye', '/^[0-9]{4}$/': 'bye', TIMEOUT: { retry: 2, then: 'bye' }, default: 'bye' } }),
        bye: say('Bye', 'end'),
        end: hangup(),
      },
    });
    expect(transitionIds(f)).toEqual([
      'route:case:1', 'route:default',
      'menu:1', 'menu:TIMEOUT', 'menu:TIMEOUT:then', 'menu:/^[0-9]{4}$/', 'menu:default', 'menu:error',
      'bye:default', 'bye:error',
    ]);
    const cases = generateCases(f);
    const then = cases.find((c) => c.transition === 'menu:TIMEOUT:then')!;
    expect(then.steps.filter((s) => s.expect === 'read').map((s) => s.result)).toEqual(['TIMEOUT', 'TIMEOUT', 'TIMEOUT']);
    const pat = cases.find((c) => c.transition === 'menu:/^[0-9]{4}$/')!;
    expect(pat.steps[0]!.result).toBe('0000');
    const yaml = scenarioYaml(f, cases);
    expect(yaml).toContain('# TODO: route takes case 1 (route:case:1): this must hold: vars.x == 1');
    const doc = parse(yaml) as { flow: string; cases: { name: string; steps: unknown[] }[] };
    expect(doc.flow).toBe('test');
    expect(doc.cases.map((c) => c.name)).toEqual(cases.map((c) => c.transition));
  });

  it('leaves out the covered transitions', () => {
    const f = flows.find((x) => x.name === 'front-desk')!;
    const all = transitionIds(f);
    const left = uncovered(f, { flows: { 'front-desk': { transitions: { 'menu:1': 2, 'menu:2': 0 } } } });
    expect(left).toEqual(all.filter((t) => t !== 'menu:1'));
    expect(generateCases(f, left).map((c) => c.transition)).not.toContain('menu:1');
  });

  for (const f of flows) {
    it(`${f.name}: every generated path reaches the transition it claims (engine-driven)`, () => {
      const cases = generateCases(f);
      expect(cases.length).toBeGreaterThan(0);
      const ids = new Set(transitionIds(f));
      let driven = 0;
      for (const c of cases) {
        expect(ids.has(c.transition)).toBe(true);
        const yamlDoc = parse(scenarioYaml(f, [c])) as { cases: { steps: unknown[] }[] };
        expect(yamlDoc.cases[0]!.steps.length).toBe(c.steps.length);
        if (c.conditional) continue; // a condition the author makes hold
        const { afterClaim } = drive(f, c);
        const e = c.edge;
        if (e.to !== '@end' && f.config.states[e.to]?.meta.kind === 'command' && !e.say) expect(afterClaim, c.transition).toBe(e.to);
        driven++;
      }
      // flows behind a routing switch have no path without a condition
      if (!cases.every((c) => c.conditional)) expect(driven).toBeGreaterThan(0);
    });
  }
});
