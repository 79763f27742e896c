/**
 * The names of a flow that a scenario file (`*.test.yaml`, docs/testing.md) writes, with where: the flow it tests
 * (`flow:`), step ids (`step:` of a case's `expect:` and of a step's `expect:`; a module's step by its namespaced id
 * `module:step`) and variables (a case's `vars:` keys, `expect.vars` keys; a case's `with:` keys, the params of a
 * module). The places src/testing/scenario.ts reads them from, read here from the positioned tree without its
 * checks: a file it would refuse for another reason still has its names. A file that is not YAML has none.
 */
import type { Range } from 'vscode-languageserver';
import { entry, loadYaml, type YMap, type YNode } from '../flow/yaml.js';
import { TOOL_FILE_DEPTH } from '../testing/http-mocks.js';
import { nodeRange } from './positions.js';
import { spanIn } from '../flow/spans.js';
import { toPosition } from './positions.js';

export interface ScenarioUse {
  kind: 'step' | 'var';
  name: string;
  range: Range;
  /** A step of a module named by its namespaced id (`module:step`): the module's name. */
  module?: string;
  /** A case's `with:` key: a param of the scenario's flow (a module). */
  param?: boolean;
  /** The keys of the map it is a key of (its own too): a rename must not take one. */
  siblings?: readonly string[];
  /** Part of a longer scalar (the step of `module:step`): a new name is written as it is, never quoted. */
  inside?: boolean;
}

export interface ScenarioNames {
  /** `flow:` as written (a flow name, or a path to a flow file), and where. */
  flow?: { value: string; range: Range };
  uses: ScenarioUse[];
}

const isMap = (n: YNode | undefined): n is YMap => n?.kind === 'map';

/** A scalar as the runner reads it: a string, or a number as written (`step: 0123` is "0123"). */
function text(n: YNode | undefined): string | undefined {
  if (n?.kind !== 'scalar' || n.value === null) return undefined;
  if (typeof n.value === 'string') return n.value;
  return n.quoted ? String(n.value) : n.source;
}

/** The names a scenario file's text writes; undefined when it is not a YAML map (or does not load). */
export function scenarioNames(source: string, file: string): ScenarioNames | undefined {
  const { root, diagnostics } = loadYaml(source, file, undefined, TOOL_FILE_DEPTH);
  if (!isMap(root) || diagnostics.some((d) => d.severity === 'error')) return undefined;
  const out: ScenarioNames = { uses: [] };
  const flow = entry(root, 'flow')?.value;
  const value = text(flow);
  if (flow && value !== undefined) out.flow = { value, range: nodeRange(flow) };
  const keys = (m: YNode | undefined, param?: boolean) => {
    if (!isMap(m)) return;
    const siblings = m.entries.map((x) => x.key); // shared by the map's keys
    for (const e of m.entries) {
      const use: ScenarioUse = { kind: 'var', name: e.key, range: nodeRange(e.keyNode), siblings };
      if (param) use.param = true;
      out.uses.push(use);
    }
  };
  const check = (expect: YNode | undefined) => {
    // an sms step's expect is its params (scenario.ts reads no check there)
    if (!isMap(expect) || entry(expect, 'sms')) return;
    keys(entry(expect, 'vars')?.value);
    const step = entry(expect, 'step')?.value;
    const id = text(step);
    if (step?.kind !== 'scalar' || id === undefined) return;
    const colon = id.indexOf(':');
    if (colon < 0) {
      out.uses.push({ kind: 'step', name: id, range: nodeRange(step) });
      return;
    }
    const span = spanIn(step, colon + 1, id.length - colon - 1);
    if (span)
      out.uses.push({
        kind: 'step',
        name: id.slice(colon + 1),
        module: id.slice(0, colon),
        range: { start: toPosition(span.pos), end: toPosition(span.end) },
        inside: true,
      });
  };
  const cases = entry(root, 'cases')?.value;
  for (const c of cases?.kind === 'seq' ? cases.items : []) {
    if (!isMap(c)) continue;
    keys(entry(c, 'vars')?.value);
    keys(entry(c, 'with')?.value, true);
    check(entry(c, 'expect')?.value);
    const steps = entry(c, 'steps')?.value;
    for (const s of steps?.kind === 'seq' ? steps.items : []) if (isMap(s)) check(entry(s, 'expect')?.value);
  }
  return out;
}
