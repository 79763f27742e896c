/**
 * How a scenario compares an expected value with the flow's (`callscript test`, docs/testing.md): scalars by their
 * text, maps as subsets; and the difference a failure shows, narrowed to the member of a long value that differs.
 */
import { full, MAX_DIFF_VALUE, type DiffEntry } from './diff.js';
import type { Plain } from './scenario.js';

/**
 * Scalars match by their text ("1" matches 1); lists and maps match deeply, maps as subsets (`whole`: maps with the
 * same keys, as a recording's params are compared).
 */
export function matches(expected: Plain, actual: unknown, whole = false): boolean {
  if (expected === null || typeof expected !== 'object') {
    if (actual === null || typeof actual !== 'object')
      return expected === null
        ? actual === null || actual === undefined
        : actual !== undefined && String(expected) === String(actual);
    return false;
  }
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => matches(e, actual[i], whole))
    );
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  if (whole && Object.keys(a).some((k) => a[k] !== undefined && !Object.hasOwn(expected, k))) return false;
  return Object.entries(expected).every(([k, v]) => matches(v, a[k], whole));
}

/** The most levels a difference is narrowed through. */
const MAX_NARROW = 32;

/**
 * One difference of a long map or list, narrowed to the first member that differs (`vars.customer.dob`, `[2]`) while
 * the values are too long to show whole: the part that differs, not a window of two long JSON texts. `fullDiff`: the
 * values whole, as they are.
 */
export function difference(
  label: string,
  expected: Plain,
  actual: unknown,
  whole: boolean,
  fullDiff: boolean,
): DiffEntry {
  let l = label;
  let e = expected;
  let a = actual;
  for (let depth = 0; !fullDiff && depth < MAX_NARROW; depth++) {
    if (full(e).length <= MAX_DIFF_VALUE && full(a).length <= MAX_DIFF_VALUE) break;
    if (e === null || typeof e !== 'object' || a === null || typeof a !== 'object') break;
    if (Array.isArray(e)) {
      const list = a as unknown[];
      if (!Array.isArray(list) || list.length !== e.length) break;
      const i = e.findIndex((x, j) => !matches(x, list[j], whole));
      if (i < 0) break;
      l = `${l}[${i}]`;
      e = e[i]!;
      a = list[i];
      continue;
    }
    if (Array.isArray(a)) break;
    const m = a as Record<string, unknown>;
    const map = e;
    const k =
      Object.keys(map).find((x) => !matches(map[x]!, m[x], whole)) ??
      (whole ? Object.keys(m).find((x) => m[x] !== undefined && !Object.hasOwn(map, x)) : undefined);
    if (k === undefined) break;
    l += /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    if (!Object.hasOwn(map, k)) return { label: l, expected: full(undefined), actual: full(m[k]) };
    e = map[k]!;
    a = m[k];
  }
  return { label: l, expected: full(e), actual: full(a) };
}
