/**
 * A branch's keys (check-results.ts, checkBranch): goto, or retry with then; each wrong mix is one diagnostic with
 * its exact message and hint.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';

const flow = (branch: string) =>
  `version: 1\nstart: a\nsteps:\n  a:\n    say: "x"\n    next: ${branch}\n  b: { hangup: {} }\n`;

const diags = (branch: string) =>
  checkFlow(flow(branch), 'f.yaml').diagnostics.map((d) => ({
    code: d.code,
    at: `${d.line}:${d.column}`,
    message: d.message,
    hint: d.hint,
  }));

describe('a branch', () => {
  it('with goto, or with retry and then: no diagnostic', () => {
    expect(diags('{ goto: b }')).toEqual([]);
    expect(diags('{ retry: 2, then: b }')).toEqual([]);
  });

  it('with goto and retry', () => {
    expect(diags('{ goto: b, retry: 2, then: b }')).toEqual([
      {
        code: 'BAD_BRANCH',
        at: '6:22',
        message: "step 'a': a branch has goto or retry, not both",
        hint: 'Use { goto: step } to leave, or { retry: n, then: step } to ask again.',
      },
    ]);
  });

  it('with then and no retry: the hint says whether goto is there', () => {
    expect(diags('{ goto: b, then: b }')).toEqual([
      {
        code: 'BAD_BRANCH',
        at: '6:22',
        message: "step 'a': 'then' goes with 'retry'",
        hint: 'Remove then: goto already says where to go.',
      },
    ]);
    expect(diags('{ then: b }')).toEqual([
      expect.objectContaining({
        code: 'BAD_BRANCH',
        at: '6:13',
        hint: 'Write { retry: n, then: step }, or { goto: step }.',
      }),
    ]);
  });

  it('with retry and no then, with neither goto nor retry (b is then never reached)', () => {
    const unreached = expect.objectContaining({ code: 'UNREACHABLE_STEP', at: '7:3' });
    expect(diags('{ retry: 2 }')).toEqual([
      expect.objectContaining({
        code: 'MISSING_KEY',
        at: '6:11',
        message: "step 'a': a branch with 'retry' needs 'then': where to go once the retries are used up",
      }),
      unreached,
    ]);
    expect(diags('{ say: "y" }')).toEqual([
      expect.objectContaining({
        code: 'BAD_BRANCH',
        at: '6:11',
        message: "step 'a': a branch needs 'goto' or 'retry' (with 'then')",
      }),
      unreached,
    ]);
  });
});
