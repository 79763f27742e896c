/**
 * How a scenario failure shows values (`callscript test`, docs/testing.md): a summary line
 * cuts each value at MAX_VALUE characters; a diff line shows a value in full up to
 * MAX_DIFF_VALUE characters, else the same window of expected and actual around their first
 * differing character, so that the difference always shows. Sensitive values are scrubbed
 * before any cut: no window shows part of one.
 */
/** The longest value a summary line (`expected:`, `actual:`) shows of one param. */
const MAX_VALUE = 60;
/** The longest value a diff line shows in full; a longer one shows a window around its first difference. */
export const MAX_DIFF_VALUE = 120;
/** Characters a diff's window shows before the first differing character. */
const DIFF_CONTEXT = 40;

/** Masks the sensitive values of a text (the identity when there are none). */
export type Scrub = (text: string) => string;
export const asIs: Scrub = (t) => t;

/** A value as JSON text, in full (a bigint digit for digit, as it goes out). */
export function full(v: unknown): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
}

/** A value for a summary line: scrubbed, then cut to MAX_VALUE characters. */
export function show(v: unknown, scrub: Scrub = asIs): string {
  const s = scrub(full(v));
  return s.length > MAX_VALUE ? s.slice(0, MAX_VALUE - 4) + '...' + s.slice(-1) : s;
}

export function showParams(p: Record<string, unknown>, scrub: Scrub = asIs): string {
  const parts = Object.entries(p).map(([k, v]) => `${k}: ${show(v, scrub)}`);
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
 * The `-`/`+` lines of a difference: each value in full when short enough, else the same window of both around their
 * first differing character, with … where text is left out; sensitive values are scrubbed before (a window never shows
 * part of one).
 */
export function diffLines(d: DiffEntry, scrub: Scrub = asIs): string[] {
  const e = scrub(d.expected);
  const a = d.note ? d.actual : scrub(d.actual);
  if (d.note || (e.length <= MAX_DIFF_VALUE && a.length <= MAX_DIFF_VALUE))
    return [`- ${d.label}: ${e}`, `+ ${d.label}: ${a}`];
  let i = 0;
  while (i < e.length && i < a.length && e[i] === a[i]) i++;
  const start = Math.max(0, i - DIFF_CONTEXT);
  const cut = (s: string) => {
    const end = Math.min(s.length, start + MAX_DIFF_VALUE);
    return `${start > 0 ? '…' : ''}${s.slice(start, end)}${end < s.length ? '…' : ''}`;
  };
  return [`- ${d.label}: ${cut(e)}`, `+ ${d.label}: ${cut(a)}`];
}
