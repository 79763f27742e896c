/**
 * The fixtures of the subflow codes (version 2), for codes.test.ts: the link stage's
 * codes are checked on a directory of files (compileAll), each at its exact position.
 */
import { compileAll } from '../../src/registry/files.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';
import { checkFlow } from '../../src/flow/check.js';
import { linkFlows } from '../../src/flow/link.js';

const MOD = (name: string, extra = '') =>
  `version: 2\nname: ${name}\nmodule:\n  params: { account: required, tries: 3 }\n  results: [verified, ` +
  `locked]\n  returns: [holder]\nstart: a\nsteps:\n  a: { return: verified }${extra}\n`;
const caller = (...lines: string[]) =>
  ['version: 2', 'start: v', 'steps:', '  v:', ...lines, '  m: { hangup: {} }', ''].join('\n');
const cyc = (name: string, other: string) =>
  `version: 2\nname: ${name}\nmodule: { results: [done] }\nstart: a\nsteps:\n  a:\n    subflow: { ` +
  `flow: ${other} }\n    next: b\n  b: { return: done }\n`;

const dir = (files: Record<string, string>) => (): Diagnostic[] =>
  compileAll(Object.entries(files).map(([file, text]) => ({ file: `flows/${file}`, text }))).report.diagnostics.filter(
    (d) => d.file === 'flows/t.yaml',
  );

export const SUBFLOW_CASES = [
  {
    name: 'a misspelt module',
    code: 'UNKNOWN_MODULE',
    text: dir({
      't.yaml': caller('    subflow: { flow: pin-chek, with: { account: "1" } }', '    next: m'),
      'pin-check.yaml': MOD('pin-check'),
    }),
    line: 5,
    column: 22,
    message: /^step 'v': no flow 'pin-chek' in this directory$/,
    hint: /did you mean 'pin-check'\?/,
  },
  {
    name: 'a flow that is no module',
    code: 'NOT_A_MODULE',
    text: dir({
      't.yaml': caller('    subflow: { flow: other }', '    next: m'),
      'other.yaml': 'version: 2\nstart: a\nsteps:\n  a: { hangup: {} }\n',
    }),
    line: 5,
    column: 22,
    message: /flow 'other' \(other\.yaml\) is not a module/,
  },
  {
    name: 'a module with errors of its own',
    code: 'MODULE_INVALID',
    text: dir({
      't.yaml': caller('    subflow: { flow: pin-check, with: { account: "1" } }', '    next: m'),
      'pin-check.yaml': MOD('pin-check', '\n  b: { say: "x", next: nowhere }'),
    }),
    line: 5,
    column: 22,
    message:
      /module 'pin-check' cannot be entered: it has 2 errors: pin-check\.yaml:10:3 UNREACHABLE_STEP .*; pin-check\.yaml:10:24 UNKNOWN_STEP no step 'nowhere'/,
  },
  {
    name: 'a misspelt param',
    code: 'UNKNOWN_PARAM',
    text: dir({
      't.yaml': caller('    subflow: { flow: pin-check, with: { acount: "1" } }', '    next: m'),
      'pin-check.yaml': MOD('pin-check'),
    }),
    line: 5,
    column: 41,
    message: /has no param 'acount' \(params: account, tries\)/,
    hint: /did you mean 'account'\?/,
  },
  {
    name: 'a required param left out',
    code: 'MISSING_PARAM',
    text: dir({
      't.yaml': caller('    subflow: { flow: pin-check, with: { tries: 2 } }', '    next: m'),
      'pin-check.yaml': MOD('pin-check'),
    }),
    line: 5,
    column: 33,
    message: /needs 'account' \(required param\) in with:/,
  },
  {
    name: 'a misspelt result',
    code: 'UNKNOWN_RESULT',
    text: dir({
      't.yaml': caller('    subflow: { flow: pin-check, with: { account: "1" } }', '    on: { verifed: m, locked: m }'),
      'pin-check.yaml': MOD('pin-check'),
    }),
    line: 6,
    column: 11,
    message: /never returns 'verifed' \(results: verified, locked\)/,
    hint: /did you mean 'verified'\?/,
  },
  {
    name: 'a misspelt returned value',
    code: 'UNKNOWN_RETURN',
    text: dir({
      't.yaml': caller(
        '    subflow: { flow: pin-check, with: { account: "1" } }',
        '    save: { name: holdr }',
        '    next: m',
      ),
      'pin-check.yaml': MOD('pin-check'),
    }),
    line: 6,
    column: 19,
    message: /returns no value 'holdr' \(returns: holder\)/,
    hint: /did you mean 'holder'\?/,
  },
  {
    name: 'two modules entering each other',
    code: 'SUBFLOW_CYCLE',
    text: () =>
      compileAll([
        { file: 'flows/t.yaml', text: cyc('t', 'b') },
        { file: 'flows/b.yaml', text: cyc('b', 't') },
      ]).report.diagnostics,
    line: 7,
    column: 22,
    message: /^modules enter each other in a cycle: b -> t -> b \(b at b\.yaml:7:22, t at t\.yaml:7:22\)$/,
  },
  {
    name: 'modules nested 9 deep',
    code: 'SUBFLOW_TOO_DEEP',
    text: () => {
      const files = Array.from({ length: 10 }, (_, i) => ({
        file: `flows/m${i}.yaml`,
        text:
          i === 9
            ? 'version: 2\nmodule: { results: [done] }\nstart: a\nsteps:\n  a: { return: done }\n'
            : cyc(`m${i}`, `m${i + 1}`),
      }));
      return compileAll(files).report.diagnostics.filter((d) => d.code === 'SUBFLOW_TOO_DEEP');
    },
    line: 7,
    column: 22,
    message: /^step 'a': entering 'm1' nests subflows 9 deep; at most 8 are allowed$/,
  },
  {
    name: 'a flow and its modules over 20,000 steps',
    code: 'SUBFLOW_TOO_LARGE',
    text: () => {
      // the bound is 20,000 steps; lowered to 20 here (checking 20,000 steps takes seconds)
      const big = (name: string) =>
        `version: 2\nname: ${name}\nmodule: { results: [done] }\nstart: s0\nsteps:\n` +
        Array.from(
          { length: 7 },
          (_, i) => `  s${i}: { ${i === 6 ? 'return: done' : `set: { x: ${i} }, next: s${i + 1}`} }`,
        )
          .map((l) => `${l}\n`)
          .join('');
      const files = [
        {
          file: 'flows/t.yaml',
          text: caller(
            '    subflow: { flow: b1 }',
            '    next: w',
            '  w:',
            '    subflow: { flow: b2 }',
            '    next: x',
            '  x:',
            '    subflow: { flow: b3 }',
            '    next: m',
          ),
        },
        { file: 'flows/b1.yaml', text: big('b1') },
        { file: 'flows/b2.yaml', text: big('b2') },
        { file: 'flows/b3.yaml', text: big('b3') },
      ];
      const out = linkFlows(
        files.map((f) => ({ ...f, result: checkFlow(f.text, f.file) })),
        { maxSteps: 20 },
      );
      return out.diagnostics.get('flows/t.yaml') ?? [];
    },
    line: 4,
    column: 3,
    message: /^the flow and the 3 modules it may enter hold 25 steps in all; at most 20 are allowed$/,
  },
  {
    name: 'the flows of a directory over 100,000 steps of modules in all',
    code: 'SUBFLOW_TOTAL_TOO_LARGE',
    text: () => {
      // the bound is 100,000 steps; lowered to 10 here: a.yaml holds the module's 7, t.yaml would take it to 14
      const mod =
        'version: 2\nname: b\nmodule: { results: [done] }\nstart: s0\nsteps:\n' +
        Array.from(
          { length: 7 },
          (_, i) => `  s${i}: { ${i === 6 ? 'return: done' : `say: "${i}", next: s${i + 1}`} }\n`,
        ).join('');
      const enter = caller('    subflow: { flow: b }', '    next: m');
      const files = [
        { file: 'flows/a.yaml', text: enter },
        { file: 'flows/b.yaml', text: mod },
        { file: 'flows/t.yaml', text: enter },
      ];
      const out = linkFlows(
        files.map((f) => ({ ...f, result: checkFlow(f.text, f.file) })),
        { maxTotal: 10 },
      );
      return out.diagnostics.get('flows/t.yaml') ?? [];
    },
    line: 5,
    column: 22,
    message:
      /^step 'v': the module 'b' holds 7 steps, compiled into this flow: the flows of this directory would hold 14 steps of modules in all; at most 10 are allowed$/,
  },
  {
    name: 'a return outside a module',
    code: 'RETURN_OUTSIDE_MODULE',
    text: 'version: 2\nstart: a\nsteps:\n  a: { return: done }\n',
    line: 4,
    column: 8,
    message: /return ends a module, and this flow is not one/,
  },
];
