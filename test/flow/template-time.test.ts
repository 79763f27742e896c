/**
 * The template time budget (limits.template_ms, 50 ms): the first half counted on the wall
 * clock (cheap), the rest in the process's CPU time, so that a render waiting for a core on
 * a loaded machine is not failed for the wait.
 */
import { describe, expect, it } from 'vitest';
import { EvalBudget, EvaluationLimit } from '../../src/flow/budget.js';
import { render } from '../../src/flow/expr.js';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const TEMPLATE = '{% for i in (1..3) %}{{ vars.name | upcase }}{% endfor %}';
const scopeWith = (budget: EvalBudget) => ({ vars: { name: 'ann' }, call: {}, result: '', error: '', budget });

describe('the template time budget', () => {
  it('reads no CPU time while the templates are within half their time by the wall clock', () => {
    const budget = new EvalBudget();
    expect(render(TEMPLATE, scopeWith(budget))).toBe('ANNANNANN');
    expect(render(TEMPLATE, scopeWith(budget))).toBe('ANNANNANN');
    expect(budget.cpuMark).toBeUndefined();
  });

  it('past half by the wall clock (a wait for a core): the CPU time is marked and the render goes on', () => {
    const budget = new EvalBudget();
    budget.templateMsLeft = -500; // half a second by the wall clock, most of it waiting
    expect(render(TEMPLATE, scopeWith(budget))).toBe('ANNANNANN');
    expect(budget.cpuMark).toBeTypeOf('number');
    expect(budget.templateMsLeft).toBeGreaterThan(0);
    // and the next wall-clock overrun is again decided by the CPU time: still little spent
    budget.templateMsLeft = -500;
    expect(render(TEMPLATE, scopeWith(budget))).toBe('ANNANNANN');
    expect(budget.spent).toBeUndefined();
  });

  it('over by the wall clock and by CPU time (half the budget plus 30 ms of CPU): EVALUATION_LIMIT', () => {
    const budget = new EvalBudget();
    budget.cpuMark = cpuMs() - 30;
    budget.templateMsLeft = -10;
    expect(() => render(TEMPLATE, scopeWith(budget))).toThrow(EvaluationLimit);
    expect(budget.spent).toMatch(/template budget is spent/);
  });
});
