import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkFlow } from '../../src/flow/check.js';
import { sameStep } from '../../src/registry/impact.js';

/** What sameStep must agree with: the step's JSON without positions. */
const shape = (v: unknown) =>
  JSON.stringify(v, (key, x: unknown) => (key === 'pos' || key.endsWith('Pos') || key === 'withAt' ? undefined : x));

const flows = new URL('../../flows/', import.meta.url).pathname;
const steps = readdirSync(flows)
  .filter((n) => n.endsWith('.yaml') && !n.endsWith('.test.yaml'))
  .flatMap((n) => Object.values(checkFlow(readFileSync(join(flows, n), 'utf8'), join(flows, n)).model!.steps));

describe('sameStep', () => {
  it('agrees with comparing the JSON without positions, on every pair of steps of the example flows', () => {
    expect(steps.length).toBeGreaterThan(50);
    const disagree: string[] = [];
    for (const a of steps)
      for (const b of steps) if (sameStep(a, b) !== (shape(a) === shape(b))) disagree.push(`${a.id} / ${b.id}`);
    expect(disagree).toEqual([]);
    // A step against a copy of itself moved elsewhere: the same.
    for (const s of steps)
      expect(sameStep(s, JSON.parse(JSON.stringify(s).replace(/"line":\d+/g, '"line":1')))).toBe(true);
  });

  it('agrees with JSON on the edge cases: key order, left-out values, numbers, nesting', () => {
    const cases: [unknown, unknown][] = [
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: 1, u: undefined }, { a: 1 }],
      [
        { a: 1, pos: { line: 1 } },
        { a: 1, pos: { line: 9 } },
      ],
      [{ a: { pos: 1, b: [1, { pos: 2 }] } }, { a: { b: [1, {}] } }],
      [[undefined], [null]],
      [
        [1, 2],
        [1, 2, 3],
      ],
      [{ a: NaN }, { a: null }],
      [{ a: Infinity }, { a: null }],
      [{ a: -0 }, { a: 0 }],
      [{ a: '1' }, { a: 1 }],
      [{ a: [] }, { a: {} }],
      [{ a: null }, { a: {} }],
      [{ a: true }, { a: 'true' }],
      [
        { 1: 'x', b: 'y' },
        { b: 'y', 1: 'x' },
      ],
      [{ a: 'x' }, { a: 'x', b: undefined, pos: 3 }],
      [{}, { a: 1 }],
    ];
    for (const [a, b] of cases)
      expect(sameStep(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(shape(a) === shape(b));
  });
});
