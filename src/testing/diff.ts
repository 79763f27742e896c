/**
 * How a scenario failure shows values (`callscript test`, docs/testing.md): a summary line
 * cuts each value at MAX_VALUE characters (a value that differs from the other side's: around
 * their first differing character); a diff line shows a value in full up to MAX_DIFF_VALUE
 * characters, else the same window of expected and actual around their first differing
 * character, so that the difference always shows. `--full-diff` shows every value whole.
 * Sensitive values are scrubbed before any cut: no window shows part of one.
 */
/** The longest value a summary line (`expected:`, `actual:`) shows of one param. */
const MAX_VALUE = 60;
/** The longest value a diff line shows in full; a longer one shows a window around its first difference. */
export const MAX_DIFF_VALUE = 120;
/** Characters a diff's window shows before the first differing character. */
const DIFF_CONTEXT = 40;
/** Characters a summary line's window shows before the first differing character. */
const VALUE_CONTEXT = 20;

/** How values are shown: scrubbed (sensitive ones masked), and whole (`--full-diff`) or cut. */
export interface ShowOptions {
  scrub?: Scrub;
  whole?: boolean;
}

/** The index of the first character where two texts differ (the shorter's length when it begins the other). */
export function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** `width` characters of `s` from `start`, with … where text is left out. */
function slice(s: string, start: number, width: number): string {
  const end = Math.min(s.length, start + width);
  return `${start > 0 ? '…' : ''}${s.slice(start, end)}${end < s.length ? '…' : ''}`;
}

/** Masks the sensitive values of a text (the identity when there are none). */
export type Scrub = (text: string) => string;
export const asIs: Scrub = (t) => t;

/** A value as JSON text, in full (a bigint digit for digit, as it goes out). */
export function full(v: unknown): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
}

/**
 * A value for a summary line: scrubbed, then cut to MAX_VALUE characters. Given the value it is compared with
 * (`other`), a difference past the cut is shown: the cut is around the first differing character.
 */
export function show(v: unknown, scrub: Scrub = asIs, other?: { value: unknown }, whole = false): string {
  const s = scrub(full(v));
  if (whole || s.length <= MAX_VALUE) return s;
  if (other !== undefined) {
    const i = firstDifference(s, scrub(full(other.value)));
    if (i >= MAX_VALUE - 4) return slice(s, Math.min(i - VALUE_CONTEXT, s.length - MAX_VALUE + 2), MAX_VALUE - 2);
  }
  return s.slice(0, MAX_VALUE - 4) + '...' + s.slice(-1);
}

/** Params for a summary line; given the params they are compared with, each that differs is cut around it. */
export function showParams(
  p: Record<string, unknown>,
  opts: ShowOptions = {},
  other?: Record<string, unknown>,
): string {
  const scrub = opts.scrub ?? asIs;
  const parts = Object.entries(p).map(
    ([k, v]) =>
      `${k}: ${show(v, scrub, other && Object.hasOwn(other, k) ? { value: other[k] } : undefined, opts.whole)}`,
  );
  return parts.length === 0 ? '{}' : `{ ${parts.join(', ')} }`;
}

/**
 * One difference of a failure: what was expected and what the flow did, as full JSON text (`shown`: a text written as
 * is, e.g. a sensitive value not shown).
 */
export interface DiffEntry {
  label: string;
  expected: string;
  actual: string;
  /** The actual side is a note written as is (not a value: not scrubbed nor windowed). */
  note?: boolean;
}

/**
 * The `-`/`+` lines of a difference: each value in full when short enough (or `whole`), else the same window of both
 * around their first differing character, with … where text is left out; sensitive values are scrubbed before (a
 * window never shows part of one).
 */
export function diffLines(d: DiffEntry, opts: ShowOptions = {}): string[] {
  const scrub = opts.scrub ?? asIs;
  const e = scrub(d.expected);
  const a = d.note ? d.actual : scrub(d.actual);
  if (opts.whole || d.note || (e.length <= MAX_DIFF_VALUE && a.length <= MAX_DIFF_VALUE))
    return [`- ${d.label}: ${e}`, `+ ${d.label}: ${a}`];
  const start = Math.max(0, firstDifference(e, a) - DIFF_CONTEXT);
  return [`- ${d.label}: ${slice(e, start, MAX_DIFF_VALUE)}`, `+ ${d.label}: ${slice(a, start, MAX_DIFF_VALUE)}`];
}
