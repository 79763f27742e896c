/**
 * Named groups of a result pattern saved (issue 22 item 4): `"/^\*(?<service>[0-9]{2})$/": { goto: x, save:
 * { service: service } }` keeps the group's text in a variable when that pattern takes the result, so that "*12*3456"
 * style inputs split without CEL string juggling. Patterns still run on the linear-time engine.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { flowJsonSchema } from '../../src/flow/schema.js';
import { parseScenario, runCase } from '../../src/testing/index.js';
import { checkFlow } from '../../src/flow/check.js';
import { Call, OPTS, reply, tts } from './helpers.js';
import { advance } from '../../src/engine/advance.js';
import { compileLinear } from '../../src/flow/pattern.js';
import { DEFAULT_EVAL_LIMITS } from '../../src/flow/budget.js';
import { yamlFlow } from './yaml.js';
import { generateCases, scenarioYaml } from '../../src/testing/paths.js';

const CODES = String.raw`version: 2
name: codes
start: code
steps:
  code:
    read: { prompt: "Enter your code, then hash.", max_digits: 12 }
    save: code
    on:
      '/^\*(?<service>[0-9]{2})\*(?<account>[0-9]+)$/': { goto: route, save: { service: service, account: account } }
      '/^\*(?P<service>[0-9]{2})(?:\*(?<extra>[0-9]+))?$/': { goto: route, save: [service, extra] }
      default: end
  route: { say: "Service {{ vars.service }}, account {{ vars.account | default: 'none' }}.", next: end }
  end: { hangup: {} }
`;
const READ = { media_id: tts('Enter your code, then hash.'), max_digits: 12 };

describe('save: of a pattern branch', () => {
  it("keeps the pattern's named groups in variables when it takes the result", async () => {
    const c = new Call(await yamlFlow(CODES, 'codes.yaml'));
    expect(c.start()).toBe(reply('read', 1, READ));
    expect(c.result('*12*3456')).toBe(reply('play', 2, { media_id: tts('Service 12, account 3456.') }));
    expect(c.state!.vars).toEqual({ code: '*12*3456', service: '12', account: '3456' });
  });

  it('a group that took no part in the match is saved empty; (?P<name>) is a name too', async () => {
    const c = new Call(await yamlFlow(CODES, 'codes.yaml'));
    c.start();
    // "*12#": the # ends the input, the service reads "*12"
    expect(c.result('*12')).toBe(reply('play', 2, { media_id: tts('Service 12, account none.') }));
    expect(c.state!.vars).toEqual({ code: '*12', service: '12', extra: '' });
  });
});

describe('sensitive groups', () => {
  const flow = (sensitive: string) => String.raw`version: 2
name: card
sensitive: [${sensitive}]
start: ask
steps:
  ask:
    read: { prompt: "Card and PIN.", max_digits: 12 }
    save: entry
    on:
      '/^(?<card>[0-9]{8})\*(?<pin>[0-9]{4})$/': { goto: done, save: [card, pin] }
      default: end
  done: { set: { last: "{{ result }}" }, next: end }
  end: { hangup: {} }
`;
  const names = async (sensitive: string) => {
    const f = await yamlFlow(flow(sensitive), 'card.yaml');
    const s = f.tables.sensitive;
    return { names: s && [...s.names].sort(), steps: s && [...s.steps] };
  };

  it('a sensitive group makes the result sensitive, and every part of it', async () => {
    // the PIN is part of the result: the result read after the step (last) and the whole input (entry) are masked
    expect(await names('pin')).toEqual({ names: ['card', 'entry', 'last', 'pin'], steps: ['ask'] });
  });

  it('a sensitive save: makes the groups of its result sensitive', async () => {
    expect(await names('entry')).toEqual({ names: ['card', 'entry', 'last', 'pin'], steps: ['ask'] });
  });

  it('the call-ended vars show the groups masked', async () => {
    const c = new Call(await yamlFlow(flow('pin'), 'card.yaml'));
    c.start();
    c.result('12345678*4821');
    expect(c.state!.vars).toEqual({ entry: '12345678*4821', card: '12345678', pin: '4821', last: '12345678*4821' });
    const { maskVars } = await import('../../src/engine/mask.js');
    expect(maskVars(c.state!.vars, c.flow.tables.sensitive)).toEqual({
      entry: '***',
      card: '***',
      pin: '***',
      last: '***',
    });
  });
});

describe('checked at load', () => {
  const diags = (on: string, version = 2) =>
    checkFlow(
      [
        `version: ${version}`,
        'start: code',
        'steps:',
        '  code:',
        '    read: { prompt: "Code?", max_digits: 12 }',
        '    on:',
        ...on.split('\n').map((l) => `      ${l}`),
        '      default: end',
        '  end: { hangup: {} }',
        '',
      ].join('\n'),
      'c.yaml',
    ).diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}${d.hint ? ` [${d.hint}]` : ''}`);

  it('a group the pattern does not name, with the nearest; a pattern without names; an Asterisk pattern', () => {
    expect(diags(String.raw`'/^\*(?<service>[0-9]{2})$/': { goto: end, save: { svc: servce } }`)).toEqual([
      "7:63 UNKNOWN_GROUP step 'code': the pattern /^\\*(?<service>[0-9]{2})$/ has no group named 'servce' " +
        "[did you mean 'service'?]",
    ]);
    expect(diags(String.raw`'/^\*([0-9]{2})$/': { goto: end, save: [service] }`)).toEqual([
      "7:47 UNKNOWN_GROUP step 'code': the pattern /^\\*([0-9]{2})$/ has no group named 'service' " +
        '[Name the part to keep in the pattern: (?<name>[0-9]+).]',
    ]);
    expect(diags(String.raw`'/^(?<a>1)(?<bb>2)$/': { goto: end, save: [zzz] }`)).toEqual([
      "7:50 UNKNOWN_GROUP step 'code': the pattern /^(?<a>1)(?<bb>2)$/ has no group named 'zzz' " +
        '[Its named groups: a, bb.]',
    ]);
    expect(diags("'_*XX': { goto: end, save: [service] }")).toEqual([
      "7:35 UNKNOWN_GROUP step 'code': the pattern _*XX has no group named 'service' [An Asterisk pattern has no " +
        'groups: write a /regular expression/ with a named group, (?<name>...).]',
    ]);
  });

  it('save: on a key that is no pattern, a bad variable name, a wrong shape, in version 1', () => {
    expect(diags(`"1": { goto: end, save: [a] }`)).toEqual([
      "7:25 MISPLACED_KEY step 'code': save: in a branch keeps the named groups of a /pattern/ key, and this " +
        "branch's key is not one [To keep the whole result, write save: on the step.]",
    ]);
    expect(diags(`'/^(?<a>1)$/': { goto: end, save: { "in": a } }`)).toEqual([
      "7:43 BAD_NAME save: 'in' is a reserved word of CEL conditions: vars.in could not be read; choose another " +
        'name [Flow names and step ids use letters, digits, `-` and `_` (64 characters at most). Variable names ' +
        'start with a letter or `_`, then letters, digits and `_`, and are not CEL reserved words (in, as, if, ' +
        'null, true...). Neither may be a name every JavaScript object has (`__proto__`, `constructor`, ' +
        '`toString`...).]',
    ]);
    expect(diags(`'/^(?<a>1)$/': { goto: end, save: a }`)).toEqual([
      "7:41 TYPE_MISMATCH step 'code': save: of a pattern is a map { variable: group } or a list of groups, not " +
        'a string ("a") [Write e.g. save: { service: svc }, or save: [svc] to name the variable as the group.]',
    ]);
    expect(diags(`'/^(?<a>1)$/': { goto: end, save: [a] }`, 1)).toEqual([
      "7:35 NEEDS_VERSION_2 save: of a pattern's groups is part of version 2 of the language; this file declares " +
        'version: 1 [Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds ' +
        'http, subflow, calendars, prompts, environments, sensitive and valid.]',
    ]);
  });

  it('a saved group declares its variable (no UNKNOWN_VARIABLE where it is read)', () => {
    const text = String.raw`version: 2
start: code
steps:
  code:
    read: { prompt: "Code?", max_digits: 12 }
    on: { '/^\*(?<svc>[0-9]{2})$/': { goto: said, save: { service: svc } }, default: end }
  said: { say: "Service {{ vars.service }}.", next: end }
  end: { hangup: {} }
`;
    expect(checkFlow(text, 'c.yaml').diagnostics).toEqual([]);
  });
});

describe('hostile', () => {
  it('a long result: both matches are charged to the request budget; over it, EVALUATION_LIMIT', async () => {
    const flow = (save: string) => `version: 2
start: rec
steps:
  rec:
    record: { max_duration: 10 }
    on: { '/^(?<head>[a-z]*)(?<tail>[0-9]*)$/': { goto: said${save} }, default: end }
  said: { say: "Said.", next: end }
  end: { hangup: {} }
`;
    const size = compileLinear('^(?:^(?<head>[a-z]*)(?<tail>[0-9]*)$)$').size;
    // one match costs 60% of the budget: with the groups saved (two matches), it is over
    const result = 'a'.repeat(Math.floor((0.6 * DEFAULT_EVAL_LIMITS.celUnits * 2) / size)) + '42';
    const plain = new Call(await yamlFlow(flow(''), 'r.yaml'));
    plain.start();
    expect(plain.result(result)).toBe(reply('play', 2, { media_id: tts('Said.') }));
    const saving = new Call(await yamlFlow(flow(', save: [head, tail]'), 'r.yaml'));
    saving.start();
    const t = performance.now();
    const out = advance(saving.flow, saving.state, saving.next({ command: 'record', command_result: result }), OPTS);
    expect(performance.now() - t).toBeLessThan(500);
    expect(out.kind === 'reply' && out.log?.map((l) => l.code)).toContain('EVALUATION_LIMIT');
    // within the budget, the groups are saved
    const short = new Call(await yamlFlow(flow(', save: [head, tail]'), 'r.yaml'));
    short.start();
    expect(short.result('abc42')).toBe(reply('play', 2, { media_id: tts('Said.') }));
    expect(short.state!.vars).toEqual({ head: 'abc', tail: '42' });
  });
});

describe('in the tools', () => {
  it('a scenario checks the groups saved', async () => {
    const text = [
      'flow: codes',
      'cases:',
      '  - name: service and account',
      '    steps:',
      '      - expect: read',
      '        result: "*12*3456"',
      '      - expect:',
      '          command: play',
      '          params: { media_id: "TTS|TTS_EN-GB_SERENA|Service 12, account 3456." }',
      '          vars: { service: "12", account: "3456" }',
      '      - expect: hangup',
      '',
    ].join('\n');
    const r = runCase(await yamlFlow(CODES, 'codes.yaml'), parseScenario(text, 's.yaml').cases[0]!);
    expect(r.failure?.message).toBeUndefined();
    expect(r.ok).toBe(true);
  });

  it('paths finds a result for each pattern, and the cases it writes pass', async () => {
    const flow = await yamlFlow(CODES, 'codes.yaml');
    const g = generateCases(flow);
    expect(g.skipped).toEqual([]);
    expect(g.cases.map((c) => c.transition)).toEqual(
      expect.arrayContaining([
        String.raw`code:/^\*(?<service>[0-9]{2})\*(?<account>[0-9]+)$/`,
        String.raw`code:/^\*(?P<service>[0-9]{2})(?:\*(?<extra>[0-9]+))?$/`,
      ]),
    );
    for (const c of parseScenario(scenarioYaml(flow, g), 'p.yaml').cases)
      expect(runCase(flow, c).failure?.message).toBeUndefined();
  });
});

describe('docs/flow-language.md', () => {
  it("the example of 'Pattern groups' checks clean, the schema accepts it, and it splits *12*3456", async () => {
    const doc = readFileSync(new URL('../../docs/flow-language.md', import.meta.url), 'utf8');
    const at = doc.indexOf('#### Pattern groups');
    const steps = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
    const flow = [
      'version: 2',
      'start: code',
      'steps:',
      steps.trimEnd(),
      '  menu: { say: "Menu.", next: end }',
      '  operator: { say: "Operator.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    expect(checkFlow(flow, 'example.yaml').diagnostics).toEqual([]);
    const validate = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(flowJsonSchema());
    expect(validate(parse(flow)), JSON.stringify(validate.errors)).toBe(true);
    const c = new Call(await yamlFlow(flow, 'example.yaml'));
    c.start();
    expect(c.result('*12*3456')).toBe(reply('play', 2, { media_id: tts('Service 12, account 3456.') }));
    const d = new Call(await yamlFlow(flow, 'example.yaml'));
    d.start();
    expect(d.result('*12')).toBe(reply('play', 2, { media_id: tts('Service 12, account none.') }));
  });
});
