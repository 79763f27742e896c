/**
 * What a scenario file's mistakes say (docs/testing.md): the key meant for a typo or a word
 * of another tool (`delay:`, `response:`, a case's `now:`), `--flows` for a flow that is
 * beside the file rather than in the flows directory, and the namespaced id of a module's
 * step in `step:`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';
import { parseScenario } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-scenario-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problems(text: string): string[] {
  try {
    parseScenario(text, 's.yaml');
  } catch (e) {
    return (e as Error).message.split('\n');
  }
  return [];
}

describe('typos in a scenario file', () => {
  it("names the key meant: a case's now: under mocks:, a step's delay: and response:", () => {
    expect(
      problems(
        [
          'flow: lookup',
          'cases:',
          '  - name: x',
          '    now: "2026-11-22T10:00:00Z"',
          '    steps:',
          '      - expect: http',
          '        delay: 100',
          '      - expect: read',
          '        response: "1"',
          '        delay: 100',
          '      - expect: read',
          '        dtmf: "2"',
          '',
        ].join('\n'),
      ),
    ).toEqual([
      's.yaml:4:5: unknown key "now" in a case: it goes under mocks: (mocks: { now: ... }); it is the clock of the ' +
        "call's first request, and a step's now: moves it on later",
      's.yaml:7:9: unknown key "delay" in a step: did you mean "answer"? (the lookup\'s answer, { status, body } or ' +
        '{ error }; a slow one: fillers: n, or delay_ms in mocks.http) (allowed: expect, result, error, status, now, ' +
        'answer, queues)',
      's.yaml:9:9: unknown key "response" in a step: did you mean "result"? (the outcome of the command the flow ' +
        'receives: digits, TIMEOUT...) (allowed: expect, result, error, status, now, answer, queues)',
      's.yaml:10:9: unknown key "delay" in a step: did you mean "now"? (the clock of the request that reports this ' +
        "step's outcome: an ISO 8601 time, or epoch ms) (allowed: expect, result, error, status, now, answer, queues)",
      's.yaml:12:9: unknown key "dtmf" in a step: did you mean "result"? (the outcome of the command the flow ' +
        'receives: digits, TIMEOUT...) (allowed: expect, result, error, status, now, answer, queues)',
    ]);
  });
});

const FLOW = `version: 1
name: hello
start: hi
steps:
  hi: { say: "Hello.", next: bye }
  bye: { hangup: {} }
`;
const SCENARIO = `flow: hello
cases:
  - name: hello
    steps:
      - expect: play
      - expect: hangup
`;

async function run(file: string, flows: string) {
  let out = '';
  const code = await testCommand([file], { flows }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('a flow that is not in the flows directory', () => {
  it('beside the scenario file: says where it is, and the --flows (or flow: path) that finds it', async () => {
    const project = join(dir, 'project');
    mkdirSync(join(project, 'flows'), { recursive: true });
    mkdirSync(join(dir, 'empty'));
    writeFileSync(join(project, 'flows', 'hello.yaml'), FLOW);
    writeFileSync(join(project, 'hello.test.yaml'), SCENARIO);
    const r = await run(join(project, 'hello.test.yaml'), join(dir, 'empty'));
    const shown = relative(process.cwd(), join(project, 'hello.test.yaml'));
    const flowFile = relative(process.cwd(), join(project, 'flows', 'hello.yaml'));
    expect(r.out).toBe(
      `${shown}:1:7: flow: no flow named "hello" in ${join(dir, 'empty')}; ${flowFile} is a flow "hello": give ` +
        `its directory with --flows ${relative(process.cwd(), join(project, 'flows'))} (or FLOWS_DIR), or its ` +
        'file as flow: flows/hello.yaml\n\n1 invalid scenario file\n0 passed, 0 failed\n',
    );
    expect(r.code).toBe(2);
    expect((await run(join(project, 'hello.test.yaml'), join(project, 'flows'))).code).toBe(0);
  });

  it('nowhere near: says how to give it', async () => {
    const alone = join(dir, 'alone');
    mkdirSync(alone);
    writeFileSync(join(alone, 'hello.test.yaml'), SCENARIO);
    const r = await run(join(alone, 'hello.test.yaml'), join(dir, 'empty2'));
    expect(r.out).toContain(
      `flow: no flow named "hello": the flows directory "${join(dir, 'empty2')}" is missing (in ${process.cwd()}): ` +
        'give the directory of your flows with --flows <dir> or FLOWS_DIR\n',
    );
    mkdirSync(join(dir, 'empty3'));
    expect((await run(join(alone, 'hello.test.yaml'), join(dir, 'empty3'))).out).toContain(
      `flow: no flow named "hello" in ${join(dir, 'empty3')}; give the directory of its flows with --flows <dir> ` +
        '(or FLOWS_DIR), or its file as flow: <file>.yaml\n',
    );
  });
});

describe('step: in a flow that enters a module', () => {
  it("names a module's step by its namespaced id; an unknown step is an error of the file", async () => {
    const file = join(dir, 'module-steps.test.yaml');
    writeFileSync(
      file,
      `flow: bank-line
environment: local
cases:
  - name: into the module
    call: { caller: "+442071234567" }
    steps:
      - expect: play
      - expect: read
        result: "1"
      - expect: { command: read, step: account }
      - expect: { command: read, step: verify-customer:pin }
    expect: { step: goodby }
`,
    );
    const r = await run(file, 'flows');
    const shown = relative(process.cwd(), file);
    expect(r.out).toBe(
      `${shown}:10:40: step: "account" is not a step of flow bank-line: it is a step of the module ` +
        'verify-customer, whose steps are named by their namespaced id in the flow that enters it: step: ' +
        'verify-customer:account\n' +
        `${shown}:12:21: step: "goodby" is not a step of flow bank-line (did you mean "goodbye"?)\n` +
        '\n1 invalid scenario file\n0 passed, 0 failed\n',
    );
    expect(r.code).toBe(2);
  });
});
