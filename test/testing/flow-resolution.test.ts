/**
 * How the tools find the flow they run, in process (the CLI functions on streams): a
 * scenario's `environment:` other than --env on a flow that enters a module, a flow refused
 * in the environment selected (its own diagnostic, not a list of other flows), a missing
 * flows directory (named, with --flows and FLOWS_DIR), a routes file that is a directory or
 * missing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { graph } from '../../src/cli/graph.js';
import { mockHttp } from '../../src/cli/mock-http.js';
import { paths } from '../../src/cli/paths.js';
import { simulate, type SimulateFlags } from '../../src/cli/simulate.js';
import { test as runTests } from '../../src/cli/test.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-flow-resolution-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const flows = join(dir, 'flows');
mkdirSync(flows);

writeFileSync(
  join(flows, 'greet.yaml'),
  `version: 2
name: greet
module:
  params: { who: required }
  results: [done]
start: hello
steps:
  hello: { say: "Hello {{ vars.who }}.", next: back }
  back: { return: done }
`,
);
writeFileSync(
  join(flows, 'main.yaml'),
  `version: 2
name: main
environments:
  local: { who: "local" }
  staging: { who: "staging" }
start: greet
steps:
  greet:
    subflow: { flow: greet, with: { who: "{{ env.who }}" } }
    next: end
  end: { hangup: {} }
`,
);
const scenario = join(dir, 'main.test.yaml');
writeFileSync(
  scenario,
  `flow: main
environment: staging
cases:
  - name: the staging greeting
    steps:
      - expect: { command: play, params: { media_id: "TTS|TTS_EN-GB_SERENA|Hello staging." } }
      - expect: hangup
`,
);

async function testCli(files: string[], flags: Record<string, string>) {
  let out = '';
  const code = await runTests(files, flags, { write: (s: string) => (out += s) });
  return { code, out };
}

const sink = () => {
  let text = '';
  return { w: new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) }), text: () => text };
};

async function sim(ref: string, flags: SimulateFlags) {
  const input = new PassThrough();
  const output = sink();
  const err = sink();
  input.end('');
  const code = await simulate(ref, flags, { input, output: output.w, err: err.w });
  return { code, out: output.text(), err: err.text() };
}

describe("a scenario's environment: other than --env", () => {
  it('runs a flow that enters a module, linked with its directory, in the environment the file names', async () => {
    for (const env of ['local', 'production']) {
      const r = await testCli([scenario], { flows, env });
      expect(r.out).toContain('✓ ');
      expect(r.out).toContain('1 passed, 0 failed');
      expect(r.code).toBe(0);
    }
  });
});

describe('a flow given by name that the flows directory refuses', () => {
  const expected =
    `${join(flows, 'main.yaml')} has errors:\n` +
    `${join(flows, 'main.yaml')}:3:1 error UNKNOWN_ENVIRONMENT the environment 'prod' is selected`;

  it('simulate, paths and graph print its own diagnostic, as the path form does', async () => {
    const s = await sim('main', { flows, env: 'prod' });
    expect(s.code).toBe(2);
    expect(s.err).toContain(`callscript simulate: ${expected}`);
    expect(s.err).toContain('hint: Its environments: local, staging.');
    const p = sink();
    expect(await paths('main', { flows, env: 'prod' }, sink().w, p.w)).toBe(2);
    expect(p.text()).toContain(`callscript paths: ${expected}`);
    const g = sink();
    expect(await graph('main', { flows, env: 'prod' }, sink().w, g.w)).toBe(2);
    expect(g.text()).toContain(`callscript graph: ${expected}`);
  });

  it('test says which flow file has which error, and runs a file whose environment: the flow has', async () => {
    const other = join(dir, 'other.test.yaml');
    writeFileSync(other, 'flow: main\ncases:\n  - name: x\n    steps: [{ expect: hangup }]\n');
    const r = await testCli([other, scenario], { flows, env: 'prod' });
    expect(r.out).toContain(
      `other.test.yaml:1:7: flow: main (${join(flows, 'main.yaml')}) has errors in environment prod ` +
        `(${join(flows, 'main.yaml')}:3:1: the environment 'prod' is selected`,
    );
    expect(r.out).toContain('1 passed, 0 failed');
  });
});

describe('no flows directory', () => {
  const missing = join(dir, 'nowhere');
  const said = `the flows directory "${missing}" is missing`;

  it('simulate, paths and graph name the directory and how to give another', async () => {
    const s = await sim('main', { flows: missing });
    expect(s.code).toBe(2);
    expect(s.err).toMatch(/^callscript simulate: no flow "main": the flows directory ".*nowhere" is missing \(in /);
    expect(s.err).toContain('give the directory of your flows with --flows <dir> or FLOWS_DIR\n');
    expect(s.err).not.toContain('ENOENT');
    const p = sink();
    expect(await paths('main', { flows: missing }, sink().w, p.w)).toBe(2);
    expect(p.text()).toContain(said);
  });

  it('test says it for each scenario file that names a flow', async () => {
    const r = await testCli([scenario], { flows: missing });
    expect(r.out).toContain(`main.test.yaml:1:7: flow: no flow named "main": ${said}`);
    expect(r.out).toContain('--flows <dir> or FLOWS_DIR');
    expect(r.code).toBe(2);
  });

  it('FLOWS_DIR gives the directory to test, paths and graph as to simulate', async () => {
    const before = process.env.FLOWS_DIR;
    process.env.FLOWS_DIR = flows;
    try {
      expect((await testCli([scenario], {})).out).toContain('1 passed, 0 failed');
      const out = sink();
      expect(await graph('main', {}, out.w, sink().w)).toBe(0);
      expect(out.text()).toContain('flowchart TD');
    } finally {
      if (before === undefined) delete process.env.FLOWS_DIR;
      else process.env.FLOWS_DIR = before;
    }
  });
});

describe('a routes file that is a directory, or missing', () => {
  it('simulate --mocks and mock-http say so in words', async () => {
    const asDir = await sim(join(flows, 'main.yaml'), { flows, mocks: dir });
    expect(asDir).toMatchObject({ code: 2, err: `callscript simulate: --mocks: ${dir} is a directory, not a file\n` });
    const none = join(dir, 'none.yaml');
    const gone = await sim(join(flows, 'main.yaml'), { flows, mocks: none });
    expect(gone).toMatchObject({ code: 2, err: `callscript simulate: --mocks: no such file ${none}\n` });
    const err = sink();
    expect(await mockHttp({ routes: dir }, sink().w, err.w)).toBe(2);
    expect(err.text()).toBe(`callscript mock-http: --routes: ${dir} is a directory, not a file\n`);
  });
});
