/**
 * A module entered by many flows is linked and made into machine states once per load,
 * shared by its callers (issue 21, item 5): the same step objects and the same state
 * configs in every caller, the caller-specific parts (its own steps, the module's returns,
 * which name the call sites) made per caller, and each caller's config the one it would
 * have alone. A module's own diagnostics are reported once, whatever the number of callers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildMachineConfig } from '../../src/flow/machine-config.js';
import { checkFlow, type CheckResult } from '../../src/flow/check.js';
import { linkFlows } from '../../src/flow/link.js';
import { FlowFiles, noTimings } from '../../src/registry/files.js';
import { Call, reply, tts } from '../engine/helpers.js';
import { codes, load } from './helpers.js';

/** A module with says (one templated), a retry, flow-wide handlers, an http step with a filler, and a nested module. */
const ASK = `version: 2
name: ask
module: { params: { who: required }, results: [done, failed], returns: [got] }
handlers:
  on:
    read: { "0": { say: "Module help.", goto: a } }
start: a
steps:
  a:
    read: { prompt: "Hello {{ vars.who }}, a digit?", max_digits: 1 }
    save: got
    on:
      "1": { say: "One, {{ vars.who }}.", goto: look }
      default: { retry: 1, say: "Again.", then: bad }
  look:
    http: { url: "https://api.example.com/x", filler: ["Please wait."] }
    on: { ok: inner, default: bad }
  inner:
    subflow: { flow: leaf }
    next: ok
  ok: { return: { result: done, values: { got: "{{ vars.got }}" } } }
  bad: { return: failed }
`;

const LEAF = `version: 2
name: leaf
module: { results: [done] }
start: a
steps:
  a: { say: "Leaf.", next: b }
  b: { return: done }
`;

function caller(name: string): string {
  return (
    `version: 2\nname: ${name}\nstart: go\nsteps:\n  go:\n    subflow: { flow: ask, with: { who: ${name} } }\n` +
    `    save: { got: got }\n    on: { done: twice, failed: bye }\n  twice:\n    subflow: { flow: ask, with: { who: ` +
    `again } }\n    next: bye\n  bye: { say: "Bye {{ vars.got }}.", next: end }\n  end: { hangup: {} }\n`
  );
}

function files(n: number): Record<string, string> {
  const out: Record<string, string> = { 'ask.yaml': ASK, 'leaf.yaml': LEAF };
  for (let i = 0; i < n; i++) out[`c${i}.yaml`] = caller(`c${i}`);
  return out;
}

describe('a module entered by 30 flows', () => {
  const { flows, modules, diagnostics } = load(files(30));
  const all = [...flows.values()];

  it('links with no diagnostic; every caller is served, the modules compiled on their own for the tools', () => {
    expect(diagnostics).toEqual([]);
    expect(all).toHaveLength(30);
    expect([...modules.keys()].sort()).toEqual(['ask', 'leaf']);
  });

  it("the module's steps and machine states are made once: every caller holds the same objects", () => {
    const first = all[0]!;
    const moduleStates = Object.keys(first.config.states).filter(
      (s) => s.includes(':') && first.config.states[s]!.meta.kind !== 'logic',
    );
    expect(moduleStates).toEqual(
      expect.arrayContaining(['ask:a', 'ask:a@say', 'ask:look', 'ask:look@filler', 'ask:look@wait', 'leaf:a']),
    );
    for (const f of all.slice(1)) {
      for (const id of ['ask:a', 'ask:look', 'ask:inner', 'leaf:a', 'leaf:b'])
        expect(f.model.steps[id]).toBe(first.model.steps[id]);
      expect(f.model.modules!['ask:']).toBe(first.model.modules!['ask:']);
      for (const s of [...moduleStates, 'ask:inner']) expect(f.config.states[s]).toBe(first.config.states[s]);
      // the caller's own states, and the module's returns (they name the caller's call sites), are its own
      for (const s of ['go', 'bye', 'ask:ok', 'leaf:b']) expect(f.config.states[s]).not.toBe(first.config.states[s]);
    }
  });

  it('each config is the one the caller would have alone, state for state and in the same order', () => {
    for (const f of all) expect(JSON.stringify(f.config)).toBe(JSON.stringify(buildMachineConfig(f.model)));
  });

  it('a call runs through the shared states: each caller its own params, returns to its own sites', () => {
    const call = new Call(flows.get('c7')!);
    expect(call.start()).toBe(reply('read', 1, { media_id: tts('Hello c7, a digit?'), max_digits: 1 }));
    expect(call.result('0')).toBe(reply('play', 2, { media_id: tts('Module help.') }));
    expect(call.result('0')).toBe(reply('read', 3, { media_id: tts('Hello c7, a digit?'), max_digits: 1 }));
    expect(call.result('5')).toBe(reply('play', 4, { media_id: tts('Again.') }));
    expect(call.result('0')).toBe(reply('read', 5, { media_id: tts('Hello c7, a digit?'), max_digits: 1 }));
    expect(call.result('5')).toBe(reply('play', 6, { media_id: tts('Again.') }));
    // the retry's then: the module returns failed (no value: got stays unset), which this caller's `go` sends to bye
    expect(call.result('0')).toBe(reply('play', 7, { media_id: tts('Bye .') }));
    expect(call.state!.f).toBeUndefined();
  });
});

describe('the same configs as before sharing, for the example flows', () => {
  it('bank-line (entering verify-customer) compiles to the config it has alone', () => {
    const dir = new URL('../../flows/', import.meta.url).pathname;
    const { flows } = load({
      'bank-line.yaml': readFileSync(`${dir}bank-line.yaml`, 'utf8'),
      'verify-customer.yaml': readFileSync(`${dir}verify-customer.yaml`, 'utf8'),
    });
    const f = flows.get('bank-line')!;
    expect(Object.keys(f.config.states)).toContain('verify-customer:give_up@say');
    expect(JSON.stringify(f.config)).toBe(JSON.stringify(buildMachineConfig(f.model)));
  });
});

describe("a module's diagnostics, with 30 callers", () => {
  it("the module's error is reported once, at its position; each caller gets one MODULE_INVALID per call site", () => {
    const broken = ASK.replace('max_digits: 1', 'max_digits: 99');
    const { flows, diagnostics } = load({ ...files(30), 'ask.yaml': broken });
    expect(flows.size).toBe(0);
    const mine = diagnostics.filter((d) => d.file === 'ask.yaml');
    expect(codes(mine)).toEqual(['ask.yaml:10:67 OUT_OF_BOUNDS']);
    for (let i = 0; i < 30; i++)
      expect(codes(diagnostics.filter((d) => d.file === `c${i}.yaml`))).toEqual([
        `c${i}.yaml:6:22 MODULE_INVALID`,
        `c${i}.yaml:10:22 MODULE_INVALID`,
      ]);
    expect(diagnostics).toHaveLength(1 + 30 * 2);
  });

  it('the registry checks each text once (the module once for 30 callers), and compiles no module alone', () => {
    const checked: string[] = [];
    const reg = new FlowFiles((text, file): CheckResult => {
      checked.push(file);
      return checkFlow(text, file);
    });
    const texts = reg.hashed(Object.entries(files(30)).map(([file, text]) => ({ file, text })));
    const { flows, report } = reg.admit(texts, noTimings());
    expect(flows).toHaveLength(30);
    expect(checked.filter((f) => f === 'ask.yaml')).toHaveLength(1);
    expect(checked).toHaveLength(32);
    // the server never serves a module: it is compiled into its callers only, not also on its own (as for the tools)
    expect(report.modules).toEqual([]);
    expect(report.refused).toEqual([]);
  });
});

describe('the steps of modules held by all the flows of a directory are bounded', () => {
  /** A module of `steps` steps (a chain of says, then a return). */
  const chain = (steps: number) =>
    `version: 2\nname: big\nmodule: { results: [done] }\nstart: s0\nsteps:\n` +
    Array.from(
      { length: steps },
      (_, i) => `  s${i}: { ${i === steps - 1 ? 'return: done' : `say: "${i}", next: s${i + 1}`} }\n`,
    ).join('');
  const enter = (name: string) =>
    `version: 2\nname: ${name}\nstart: go\nsteps:\n  go:\n    subflow: { flow: big }\n    next: bye\n  bye: { ` +
    `hangup: {} }\n`;
  const dir = (n: number) => [
    { file: 'big.yaml', text: chain(7) },
    ...Array.from({ length: n }, (_, i) => ({ file: `c${String(i).padStart(2, '0')}.yaml`, text: enter(`c${i}`) })),
  ];

  it('30 callers of a 7-step module, at most 50: the first 7 in order are linked, each other refused once', () => {
    const files = dir(30);
    const out = linkFlows(
      files.map((f) => ({ ...f, result: checkFlow(f.text, f.file) })),
      { maxTotal: 50 },
    );
    expect([...out.linked.keys()]).toEqual(files.slice(1, 8).map((f) => f.file));
    expect([...out.failed]).toEqual(files.slice(8).map((f) => f.file));
    for (const f of files.slice(8))
      expect(codes(out.diagnostics.get(f.file)!)).toEqual([`${f.file}:6:22 SUBFLOW_TOTAL_TOO_LARGE`]);
    expect(out.diagnostics.get('c08.yaml')![0]!.message).toBe(
      "step 'go': the module 'big' holds 7 steps, compiled into this flow: the flows of this directory would hold " +
        '56 steps of modules in all; at most 50 are allowed',
    );
    expect([...out.diagnostics.keys()]).toHaveLength(23);
  });

  it('the files first in the order given keep their place: the registry gives the files already serving first', () => {
    const files = dir(3);
    const reg = new FlowFiles(checkFlow, { maxTotal: 14 });
    const first = reg.admit(reg.hashed(files), noTimings());
    expect(first.flows.map((f) => f.name)).toEqual(['c0', 'c1']);
    expect(first.report.refused).toEqual(['c02.yaml']);
    // a new file named before them comes after them (owners first, as Registry.apply orders them): it is refused
    const late = { file: 'a.yaml', text: enter('a') };
    const second = reg.admit(reg.hashed([...files, late]), noTimings());
    expect(second.flows.map((f) => f.name)).toEqual(['c0', 'c1']);
    expect(second.report.refused).toEqual(['c02.yaml', 'a.yaml']);
    expect(codes(second.report.diagnostics.filter((d) => d.severity === 'error'))).toEqual([
      'c02.yaml:6:22 SUBFLOW_TOTAL_TOO_LARGE',
      'a.yaml:6:22 SUBFLOW_TOTAL_TOO_LARGE',
    ]);
  });

  it('modules that enter modules count too: each holds the steps of those it enters', () => {
    const mid =
      'version: 2\nname: mid\nmodule: { results: [done] }\nstart: a\nsteps:\n  a:\n    subflow: { flow: big }\n' +
      '    next: b\n  b: { return: done }\n';
    const out = linkFlows(
      [
        { file: 'big.yaml', text: chain(7) },
        { file: 'mid.yaml', text: mid },
        { file: 'x.yaml', text: enter('x') },
      ].map((f) => ({ ...f, result: checkFlow(f.text, f.file) })),
      { maxTotal: 10 },
    );
    // mid (compiled on its own for the tools) holds big's 7; x would take it to 14
    expect([...out.linked.keys()]).toEqual(['mid.yaml']);
    expect(codes(out.diagnostics.get('x.yaml')!)).toEqual(['x.yaml:6:22 SUBFLOW_TOTAL_TOO_LARGE']);
  });
});
