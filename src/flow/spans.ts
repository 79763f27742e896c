/**
 * Positions inside a string as written: a diagnostic about one name in a long template
 * underlines that name, not the whole text. The value (quotes and escapes resolved, lines
 * folded) and the text as written differ, so the name is found in the written text: its
 * k-th occurrence there, when it is the k-th in the value. Undefined when that cannot be
 * told (an escape inside the name itself): the caller underlines the whole string.
 */
import type { Loc, YScalar } from './yaml.js';

export interface Span {
  pos: Loc;
  end: Loc;
}

export function spanIn(s: YScalar, valueOffset: number, length: number): Span | undefined {
  const value = typeof s.value === 'string' ? s.value : undefined;
  if (value === undefined || s.raw === undefined || length <= 0) return undefined;
  const token = value.slice(valueOffset, valueOffset + length);
  let k = 0;
  for (let i = value.indexOf(token); i >= 0 && i < valueOffset; i = value.indexOf(token, i + 1)) k++;
  let at = s.raw.indexOf(token);
  for (let j = 0; j < k && at >= 0; j++) at = s.raw.indexOf(token, at + 1);
  if (at < 0) return undefined;
  return { pos: locAt(s, at), end: locAt(s, at + length) };
}

function locAt(s: YScalar, i: number): Loc {
  const raw = s.raw!;
  let line = s.pos.line;
  let last = -1;
  for (let j = raw.indexOf('\n'); j >= 0 && j < i; j = raw.indexOf('\n', j + 1)) {
    line++;
    last = j;
  }
  return { line, col: last < 0 ? s.pos.col + i : i - last };
}
