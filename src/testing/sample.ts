/**
 * A sample string for a (simple) regular expression: what `paths` feeds a pattern key
 * (`/^[0-9]{4}$/` gives "0000", `_2XX` gives "200") and what it tries for a `matches()`
 * condition. Checked against the linear-time engine that runs the flow's patterns.
 */
import { compileLinear, type LinearRegex } from '../flow/pattern.js';

/** A string matching a (simple) regular expression source, or undefined. */
export function sampleFor(regex: string): string | undefined {
  let re: LinearRegex;
  try {
    re = compileLinear(regex);
  } catch {
    return undefined;
  }
  const out = gen(regex);
  for (const s of [out, out?.replace(/a/g, '0'), '0', '1', '00', '0000', ''])
    if (s !== undefined && re.test(s)) return s;
  return undefined;
}

function gen(src: string): string | undefined {
  let i = 0;
  const alt = (): string => {
    const s = seq();
    while (src[i] === '|') {
      i++;
      seq();
    }
    return s;
  };
  const atom = (): string | null => {
    const ch = src[i]!;
    if (ch === '^' || ch === '$') {
      i++;
      return '';
    }
    if (ch === '(') {
      i++;
      // a named group, (?<name>...) or (?P<name>...), is a group like any other
      const named = /^\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(src.slice(i, i + 72));
      if (named) i += named[0].length;
      else if (src[i] === '?') i += src[i + 1] === '<' ? 3 : 2;
      const s = alt();
      i++; // )
      return s;
    }
    if (ch === '[') {
      let j = i + 1;
      const neg = src[j] === '^';
      if (neg) j++;
      let first = src[j] === '\\' ? esc(src[j + 1]!) : src[j]!;
      while (j < src.length && !(src[j] === ']' && j > i + 1)) j += src[j] === '\\' ? 2 : 1;
      i = j + 1;
      if (neg) first = first === 'a' ? 'b' : 'a';
      return first;
    }
    if (ch === '\\') {
      i += 2;
      return esc(src[i - 1]!);
    }
    if (ch === '.') {
      i++;
      return 'a';
    }
    i++;
    return ch;
  };
  const seq = (): string => {
    let s = '';
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      const a = atom();
      if (a === null) return s;
      let n = 1;
      const q = src[i];
      if (q === '*' || q === '?') {
        n = 0;
        i++;
      } else if (q === '+') {
        i++;
      } else if (q === '{') {
        const m = /^\{(\d+)(,\d*)?\}/.exec(src.slice(i));
        if (m) {
          n = Number(m[1]);
          i += m[0].length;
        }
      }
      if (src[i] === '?') i++; // lazy
      s += a.repeat(n);
    }
    return s;
  };
  try {
    return alt();
  } catch {
    return undefined;
  }
}

function esc(c: string): string {
  if (c === 'd') return '0';
  if (c === 'w') return 'a';
  if (c === 's') return ' ';
  if (c === 'D' || c === 'W' || c === 'S') return '-';
  return c;
}
