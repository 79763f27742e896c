import { mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { paths } from '../../src/cli/paths.js';
import { test as runTests } from '../../src/cli/test.js';
import { compileAll } from '../../src/registry/registry.js';
import { Coverage } from '../../src/testing/coverage.js';
import { generateCases, scenarioYaml, uncovered } from '../../src/testing/paths.js';
import { sampleFor } from '../../src/testing/sample.js';
import { scenarioSchemaRef } from '../../src/testing/schema-ref.js';
import { flowTransitions } from '../../src/testing/transitions.js';
import { cmd, flow, hangup, say, sw } from '../engine/helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const dir = join(root, 'flows');
const flows = compileAll(
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'))
    .map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') })),
).flows;

const sink = () => {
  let text = '';
  return { w: new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) }), text: () => text };
};

/** `callscript test` on the files with coverage; its output and exit code. */
async function covered(files: string[], extra: Record<string, string> = {}) {
  let out = '';
  const code = await runTests(files, { flows: dir, coverage: true, ...extra }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('callscript paths', () => {
  it('samples results for patterns', () => {
    expect(sampleFor('^[0-9]{4}$')).toBe('0000');
    expect(sampleFor('^1[0-9][0-9]$')).toBe('100');
    expect(sampleFor('^(yes|no)$')).toBe('yes');
    expect(sampleFor('^\\d+#$')).toBe('0#');
  });

  it(
    'one definition of the transitions: coverage lists them, ' + 'one case is written per transition, named after it',
    () => {
      const f = flow({
        handlers: { error: 'bye', on: { read: { '0': 'bye' } } },
        steps: {
          route: sw([['vars.x == 1', 'menu']], 'menu'),
          menu: cmd(
            'read',
            { max_digits: 4 },
            { on: { '1': 'bye', '/^[0-9]{4}$/': 'bye', TIMEOUT: { retry: 2, then: 'bye' }, default: 'bye' } },
          ),
          other: cmd('read', { max_digits: 1 }, { on: { '1': 'bye' } }),
          bye: say('Bye', 'end'),
          end: hangup(),
        },
        vars: { x: 0 },
      });
      const all = flowTransitions(f).all;
      // handlers:error and handlers.on.read:0 once per flow; no `default` for a step that has none
      expect(all).toEqual([
        'route:case1',
        'route:default',
        'menu:1',
        'menu:TIMEOUT',
        'menu:TIMEOUT:then',
        'menu:/^[0-9]{4}$/',
        'menu:default',
        'other:1',
        'bye:default',
        'handlers.on.read:0',
        'handlers:error',
      ]);
      const cov = new Coverage();
      expect(cov.register(f).all).toEqual(all);
      const g = generateCases(f);
      expect(g.cases.map((c) => c.transition)).toEqual(all.filter((k) => k !== 'other:1'));
      expect(g.skipped).toEqual([
        { transition: 'other:1', why: 'cannot be taken: no branch of the flow leads to step other' },
      ]);
      const yaml = scenarioYaml(f, g);
      const doc = parse(yaml) as {
        flow: string;
        cases: { name: string; vars?: Record<string, unknown>; steps: { expect: string; result?: string }[] }[];
      };
      expect(doc.cases.map((c) => c.name)).toEqual(g.cases.map((c) => c.transition));
      // the case for route:case1 sets the var its condition reads; the retries are sent retry+1 times
      expect(doc.cases.find((c) => c.name === 'route:case1')!.vars).toEqual({ x: 1 });
      expect(doc.cases.find((c) => c.name === 'menu:TIMEOUT:then')!.steps.map((s) => s.result ?? s.expect)).toEqual([
        'TIMEOUT',
        'TIMEOUT',
        'TIMEOUT',
        'play',
      ]);
      expect(doc.cases.find((c) => c.name === 'menu:/^[0-9]{4}$/')!.steps[0]).toEqual({
        expect: 'read',
        result: '0000',
      });
      expect(yaml).toContain('#   other:1: cannot be taken: no branch of the flow leads to step other\n');
    },
  );

  it('says why no scenario can take a transition, and writes no case for it', () => {
    const f = flow({
      steps: {
        dial: cmd(
          'dialout',
          { targets: [{ number: '+442079460100', timeout: 20 }] },
          { on: { NOANSWER: 'bye', default: 'bye' } },
        ),
        bye: cmd('play', { media_id: ['Bye'] }, { on: { '0': 'end', '1': 'end', default: 'end' } }),
        end: hangup(),
      },
    });
    const g = generateCases(f);
    expect(g.cases.map((c) => c.transition)).toEqual(['dial:NOANSWER', 'bye:0', 'bye:1']);
    expect(g.skipped).toEqual([
      {
        transition: 'dial:default',
        why:
          'cannot be taken: dialout returns only NOANSWER (an answered dialout ends the call with a terminal ' +
          'status, not a result): NOANSWER takes dial:NOANSWER',
      },
      { transition: 'bye:default', why: 'cannot be taken: play returns 0 or 1: 0 takes bye:0, 1 takes bye:1' },
    ]);
  });

  it('says when the search found no call for a condition, and writes no case for it', () => {
    const f = flow({
      steps: {
        lucky: sw([['int(call.callid) % 7919 == 5', 'end']], 'end'),
        end: hangup(),
      },
    });
    const g = generateCases(f, undefined, { maxStates: 50 });
    expect(g.cases.map((c) => c.transition)).toEqual(['lucky:default']);
    expect(g.skipped).toEqual([
      {
        transition: 'lucky:case1',
        why: expect.stringMatching(
          /^not found: no call searched \(\d+ call states from 1 start\) reached this step where its condition `int\(call.callid\) % 7919 == 5` held; write this case by hand/,
        ),
      },
    ]);
  });

  it(
    'stops at its time limit and says so: a flow whose every request spends its budget cannot hold the search ' +
      'for hours',
    async () => {
      const text = [
        'version: 1',
        'start: ask',
        'vars: { n: 0 }',
        'steps:',
        '  ask: { read: { prompt: "Go?", max_digits: 1 }, next: count }',
        '  count: { set: { n: { expr: "vars.n + 1" } }, next: lucky }',
        '  lucky:',
        '    switch:',
        '      - { when: "vars.n > 1000000", goto: end }',
        '    default: ask',
        '  end: { hangup: {} }',
      ].join('\n');
      const f = compileAll([{ file: 'loop.yaml', text }]).flows[0]!;
      let t = 0;
      // every read of the clock is 1 s later: the search stops at its 6th request
      const g = generateCases(f, undefined, { maxMs: 5000, now: () => (t += 1000) - 1000 });
      expect(g.outOfTime).toBe(5000);
      expect(g.skipped).toEqual([
        {
          transition: 'lucky:case1',
          why: expect.stringMatching(
            /^not found: no call searched \(\d+ call states from 1 start, stopped at its time limit of 5 s: --max-seconds\) reached this step/,
          ),
        },
      ]);
      // without the clock moving, the same search goes on past 5 requests and is not out of time
      expect(generateCases(f, undefined, { maxStates: 50, maxMs: 5000, now: () => 0 }).outOfTime).toBeUndefined();
      const err = sink();
      expect(await paths('front-desk', { flows: dir, maxSeconds: '0' }, sink().w, err.w)).toBe(2);
      expect(err.text()).toBe('callscript paths: --max-seconds "0" is not a number of seconds between 0 and 86400\n');
    },
  );

  it(
    'writes only results the command can return (no invented dialout "9"), and one handlers:error case, not ' +
      'one per step',
    () => {
      const f = flows.find((x) => x.name === 'support-line')!;
      const g = generateCases(f);
      const doc = parse(scenarioYaml(f, g)) as {
        cases: { name: string; steps: { expect: string; result?: string }[] }[];
      };
      const dialouts = doc.cases.flatMap((c) =>
        c.steps.filter((s) => s.expect === 'dialout' && s.result !== undefined).map((s) => s.result),
      );
      expect(new Set(dialouts)).toEqual(new Set(['NOANSWER']));
      expect(doc.cases.filter((c) => c.name === 'handlers:error')).toHaveLength(1);
      expect(doc.cases.map((c) => c.name)).not.toContain('welcome:error');
      expect(doc.cases.map((c) => c.name)).not.toContain('direct:default');
    },
  );

  // paths does not mock http lookups yet: a flow with http steps gets its other cases, and
  // the transitions behind a lookup are named as "write this case by hand" (next test)
  // bank-line included: its http lookups take each branch (ok, the statuses named, timeout, error) from mocks.http
  for (const f of flows) {
    it(`${f.name}: the cases generated for every transition pass and reach 100% of its transitions`, async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'paths-'));
      const file = join(tmp, `${f.name}.test.yaml`);
      const err = sink();
      expect(await paths(f.name, { flows: dir, out: file }, sink().w, err.w)).toBe(0);
      const all = flowTransitions(f).all;
      expect(err.text()).toBe(`${file}: ${all.length} cases for ${all.length} uncovered transitions\n`);
      const names = (parse(readFileSync(file, 'utf8')) as { cases: { name: string }[] }).cases.map((c) => c.name);
      expect(names).toEqual(all);
      const { code, out } = await covered([file]);
      expect(out).toContain(`\n${all.length} passed, 0 failed\n`);
      expect(out).toMatch(
        new RegExp(
          `${f.name} \\(.*\\): steps 100% \\((\\d+)/\\1\\), transitions 100% \\(${all.length}/${all.length}\\)`,
        ),
      );
      expect(code).toBe(0);
    });
  }

  it('with --covered: exactly the transitions the coverage report says were never taken; together, 100%', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'paths-'));
    // the first three cases of the example scenarios
    const text = readFileSync(join(dir, 'support-line.test.yaml'), 'utf8');
    const cut =
      text
        .split(/\n(?= {2}- name: )/)
        .slice(0, 4)
        .join('\n') + '\n';
    const partial = join(tmp, 'partial.test.yaml');
    writeFileSync(partial, cut);
    const json = join(tmp, 'cov.json');
    const first = await covered([partial], { coverageJson: json });
    const section = first.out.slice(first.out.indexOf('\n  support-line ('), first.out.indexOf('\n  voicemail ('));
    const missed = [...section.matchAll(/transition never taken: (\S+)/g)].map((m) => m[1]);
    expect(missed.length).toBeGreaterThan(10);
    const gen = join(tmp, 'gen.test.yaml');
    const err = sink();
    expect(await paths('support-line', { flows: dir, out: gen, covered: json }, sink().w, err.w)).toBe(0);
    expect(err.text()).toBe(`${gen}: ${missed.length} cases for ${missed.length} uncovered transitions\n`);
    const f = flows.find((x) => x.name === 'support-line')!;
    expect(uncovered(f, JSON.parse(readFileSync(json, 'utf8')))).toEqual(missed);
    expect((parse(readFileSync(gen, 'utf8')) as { cases: { name: string }[] }).cases.map((c) => c.name)).toEqual(
      missed,
    );
    const both = await covered([partial, gen]);
    expect(both.out).toMatch(/support-line \(.*\): steps 100% \(28\/28\), transitions 100% \(71\/71\)/);
    expect(both.code).toBe(0);
  });
});

describe('the $schema line of a generated scenario file', () => {
  const firstLine = (file: string) => readFileSync(file, 'utf8').split('\n')[0];

  it('in the repository: the relative path to its schemas/', async () => {
    expect(scenarioSchemaRef(join(root, 'flows', 'front-desk.paths.test.yaml'))).toBe(
      '../schemas/scenario.schema.json',
    );
    const tmp = mkdtempSync(join(root, '.paths-'));
    try {
      const file = join(tmp, 'a', 'gen.test.yaml');
      mkdirSync(join(tmp, 'a'));
      expect(await paths('front-desk', { flows: dir, out: file }, sink().w, sink().w)).toBe(0);
      expect(firstLine(file)).toBe('# yaml-language-server: $schema=../../schemas/scenario.schema.json');
    } finally {
      (await import('node:fs')).rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('in a project that installed callscript: node_modules/callscript/schemas/, relative to the file', async () => {
    const proj = mkdtempSync(join(tmpdir(), 'proj-'));
    mkdirSync(join(proj, 'node_modules', 'callscript', 'schemas'), { recursive: true });
    writeFileSync(join(proj, 'node_modules', 'callscript', 'schemas', 'scenario.schema.json'), '{}');
    mkdirSync(join(proj, 'tests', 'calls'), { recursive: true });
    const file = join(proj, 'tests', 'calls', 'gen.test.yaml');
    expect(await paths(join(dir, 'front-desk.yaml'), { out: file }, sink().w, sink().w)).toBe(0);
    expect(firstLine(file)).toBe(
      '# yaml-language-server: $schema=../../node_modules/callscript/schemas/scenario.schema.json',
    );
    // the flow, given by path, is named relative to the written file
    expect(readFileSync(file, 'utf8')).toContain(
      `\nflow: ${JSON.stringify(relative(join(proj, 'tests', 'calls'), join(dir, 'front-desk.yaml')))}\n`,
    );
    const { code, out } = await covered([file]);
    expect(out).toMatch(/ passed, 0 failed\n/);
    expect(code).toBe(0);
  });

  it('neither: no $schema line (rather than a wrong path); none on stdout either', async () => {
    const bare = mkdtempSync(join(tmpdir(), 'bare-'));
    const file = join(bare, 'gen.test.yaml');
    expect(await paths('front-desk', { flows: dir, out: file }, sink().w, sink().w)).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toContain('$schema');
    expect(firstLine(file)).toBe(
      '# Generated by `callscript paths front-desk`: one case per transition not yet covered, each the',
    );
    const out = sink();
    expect(await paths('front-desk', { flows: dir }, out.w, sink().w)).toBe(0);
    expect(out.text()).not.toContain('$schema');
  });
});
