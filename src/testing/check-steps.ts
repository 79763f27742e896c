/**
 * The `step:` of a scenario's checks (`expect: { step: x }`, a case's `expect: { step: x }`) against the flow's steps:
 * a name that is no step of the flow is an error of the file, at its position, with the step meant: a module's step is
 * named by its namespaced id (`verify-customer:account`), as the call reports it.
 */
import type { CompiledFlow } from '../engine/compile.js';
import { closest } from '../flow/check-context.js';
import type { CallCheck, Scenario, ScenarioError } from './scenario.js';

export function checkStepNames(s: Scenario, flow: CompiledFlow): ScenarioError[] {
  const ids = Object.keys(flow.model.steps);
  const known = new Set(ids);
  const errors: ScenarioError[] = [];
  const check = (c: CallCheck | undefined) => {
    if (c?.step === undefined || known.has(c.step)) return;
    const pos = c.stepPos ?? { line: 1, col: 1 };
    errors.push({ file: s.file, line: pos.line, column: pos.col, message: stepProblem(c.step, ids, flow.name) });
  };
  for (const c of s.cases) {
    check(c.expect);
    for (const st of c.steps) check(st.check);
  }
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}

function stepProblem(step: string, ids: readonly string[], flow: string): string {
  const head = `step: "${step}" is not a step of flow ${flow}`;
  // a module's step written without its module: the call is at `<module>:<step>`
  const inModules = ids.filter((id) => id.endsWith(`:${step}`));
  if (inModules.length > 0)
    return (
      `${head}: it is a step of the module ${inModules.map((id) => id.slice(0, -step.length - 1)).join(', ')}, ` +
      `whose steps are named by their namespaced id in the flow that enters it: step: ${inModules[0]}`
    );
  const near = closest(step, ids);
  return `${head}${near !== undefined ? ` (did you mean "${near}"?)` : ` (its steps: ${listed(ids)})`}`;
}

/** The step ids, the first 20. */
function listed(ids: readonly string[]): string {
  return ids.length > 20 ? `${ids.slice(0, 20).join(', ')}, ...` : ids.join(', ');
}
