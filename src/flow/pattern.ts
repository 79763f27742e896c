/**
 * Regular expressions from flows (result keys `/.../`, CEL's `matches()`), run by a
 * linear-time engine: re2js, a pure JavaScript port of RE2. A backtracking engine (the
 * JavaScript RegExp) can take exponential time on a pattern such as `^(1+)+$`: 30
 * characters of result blocked every call for 20 s. With RE2 a match costs time linear in
 * the text (times the size of the pattern), whatever the pattern.
 *
 * The syntax is RE2's, which is JavaScript's without lookaround ((?=, (?!, (?<=, (?<!)
 * and backreferences (\1, \k<name>): a pattern using them is refused at load with the
 * engine's message. For convenience the JavaScript escapes \uXXXX and \u{X...} are
 * accepted (RE2 writes them \x{XXXX}).
 */
import { RE2JS } from 're2js';

/** A compiled pattern: `test` says whether it matches somewhere in the text. */
export interface LinearRegex {
  test(text: string): boolean;
  /** The text of each named group (`(?<name>...)`, `(?P<name>...)`) of the first match: "" for a group left out. */
  groups?(text: string): Record<string, string> | undefined;
  /** The names of its named groups, in order. */
  readonly names?: readonly string[];
  /** The compiled program's size (instructions): a match costs about text length x size steps. */
  readonly size: number;
}

/** The longest pattern source accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1000;
/**
 * The largest program a pattern may compile to, in instructions. A match costs the text's
 * length times this at most (RE2 runs the program over the text): `(.*){1000}b` is 4,003
 * instructions and took 4 s over a 63 KB result. Counted repetitions are what make
 * programs big: `\d{4}-\d{2}` is 9; `[0-9*]{1,20}` 43.
 */
export const MAX_PATTERN_SIZE = 1000;

export class PatternError extends Error {}

/**
 * Compiles `source` (RE2 syntax, JavaScript \u escapes allowed) for the linear-time
 * engine. Throws PatternError with a message fit for a diagnostic.
 */
export function compileLinear(source: string): LinearRegex {
  if (source.length > MAX_PATTERN_LENGTH)
    throw new PatternError(`the pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH}`);
  // bounded before compiling: a short pattern of big counted repetitions would take seconds and gigabytes to compile
  const size = estimateSize(source);
  if (size > 4 * MAX_PATTERN_SIZE) throw new PatternError(tooBig(`about ${size.toLocaleString('en-US')}`));
  const weight = compileWeight(source);
  if (weight > MAX_PATTERN_WEIGHT)
    throw new PatternError(
      `the pattern's Unicode classes (\\p{...}) weigh ${weight.toLocaleString('en-US')} to compile; at ` +
        `most ${MAX_PATTERN_WEIGHT.toLocaleString('en-US')} (a class counts ${UNICODE_CLASS_WEIGHT} ` +
        `instructions): repeat them less, or use a plain class such as [a-z]`,
    );
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJavaScript(source));
  } catch (err) {
    throw new PatternError(explain(err instanceof Error ? err.message : String(err)));
  }
  const compiled = re.matcher('').programSize();
  if (compiled > MAX_PATTERN_SIZE) throw new PatternError(tooBig(compiled.toLocaleString('en-US')));
  const names = Object.entries(re.namedGroups())
    .sort((a, b) => a[1] - b[1])
    .map(([n]) => n);
  return {
    test: (text) => re.matcher(text).find(),
    groups(text) {
      const m = re.matcher(text);
      if (!m.find()) return undefined;
      // no prototype: a group may be named __proto__
      const out = Object.create(null) as Record<string, string>;
      for (const n of names) out[n] = m.group(n) ?? '';
      return out;
    },
    names,
    size: compiled,
  };
}

function tooBig(size: string): string {
  return (
    `the pattern compiles to ${size} instructions; at most ${MAX_PATTERN_SIZE.toLocaleString('en-US')} (a ` +
    `match costs the text's length times this): use smaller counted repetitions ({n}), or test the length apart`
  );
}

/**
 * An upper estimate of a pattern's program size, from its text alone: each atom (a
 * character, an escape, a class) counts 1, a group counts its contents, and a counted
 * repetition {n,m} multiplies what it repeats by its largest count. `\Q...\E` is literal.
 */
export function estimateSize(source: string): number {
  return estimate(source, 1);
}

/**
 * What compiling a pattern costs, in "instructions" of work: its estimated size, a Unicode
 * class (\pL, [\p{Greek}]) counting UNICODE_CLASS_WEIGHT, since re2js builds its ranges (300
 * of \pL|\pN took 18 ms and megabytes to compile, where 300 plain instructions take 1 ms).
 */
export function compileWeight(source: string): number {
  return estimate(source, UNICODE_CLASS_WEIGHT);
}

/** What a Unicode class weighs in compileWeight. */
export const UNICODE_CLASS_WEIGHT = 20;
/** The compile weight one pattern may have (MAX_PATTERN_SIZE plain instructions, 200 Unicode classes). */
export const MAX_PATTERN_WEIGHT = 4 * MAX_PATTERN_SIZE;
/** The compile weight all the result patterns of one flow may have together. */
export const MAX_FLOW_PATTERN_WEIGHT = 20 * MAX_PATTERN_SIZE;

function estimate(source: string, classWeight: number): number {
  const stack: number[] = [0];
  let last = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const n = source[i + 1];
      if (n === 'Q') {
        // literal up to \E (or the end): each character an atom
        const end = source.indexOf('\\E', i + 2);
        const stop = end < 0 ? source.length : end;
        stack[stack.length - 1]! += Math.max(0, stop - (i + 2) - 1);
        last = 1;
        i = end < 0 ? source.length : end + 1;
      } else if (n === 'p' || n === 'P') {
        if (source[i + 2] === '{') i = Math.max(i + 1, source.indexOf('}', i));
        else i += 2;
        last = classWeight;
      } else if (n === 'x' && source[i + 2] === '{') {
        i = Math.max(i + 1, source.indexOf('}', i));
        last = 1;
      } else {
        i++;
        last = 1;
      }
    } else if (c === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      let unicode = false;
      for (; j < source.length && source[j] !== ']'; j++) {
        if (source[j] === '\\') {
          if (source[j + 1] === 'p' || source[j + 1] === 'P') unicode = true;
          j++;
        }
      }
      i = j;
      last = unicode ? classWeight : 1;
    } else if (c === '(') {
      stack.push(0);
      continue;
    } else if (c === ')') {
      last = (stack.length > 1 ? stack.pop()! : 0) + 1;
    } else if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 24));
      if (m) {
        const k = Math.max(Number(m[1]), Number(m[2] || 0), 1);
        stack[stack.length - 1]! += last * (k - 1);
        i += m[0].length - 1;
        continue;
      }
      last = 1;
    } else if (c === '*' || c === '+' || c === '?' || c === '|') {
      stack[stack.length - 1]! += 1;
      continue;
    } else last = 1;
    stack[stack.length - 1]! += last;
  }
  return stack.reduce((a, b) => a + b, 0);
}

/**
 * What matching `text` costs in CEL cost units (budget.ts): RE2 runs the program over the
 * text, about length x size steps, two of them a unit.
 */
export function matchCost(re: LinearRegex, text: string): number {
  return Math.ceil((text.length * Math.max(1, re.size)) / 2);
}

/**
 * What compiling a pattern costs in CEL cost units (a unit is about 40 ns; a plain instruction about 3 µs to compile).
 */
export function compileCost(source: string): number {
  return 75 * compileWeight(source);
}

/** null when `source` compiles, else why not. */
export function linearError(source: string): string | null {
  try {
    compileLinear(source);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** RE2's message, with what to do when the pattern uses what RE2 leaves out on purpose. */
function explain(msg: string): string {
  const m = msg.replace(/^error parsing regexp: /, '');
  if (/`\(\?[=!<]/.test(m))
    return (
      `${m}: lookahead and lookbehind are not supported (patterns run on a linear-time engine); match the text ` +
      `itself, or test it in a condition`
    );
  if (/`\\[1-9k]/.test(m)) return `${m}: backreferences are not supported (patterns run on a linear-time engine)`;
  return m;
}

/** \uXXXX and \u{X...} become \x{...}; everything else is left as written (escaped backslashes too). */
function fromJavaScript(source: string): string {
  if (!source.includes('\\u')) return source;
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = source[i + 1];
    if (next === 'u') {
      const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(source.slice(i + 2, i + 10));
      const plain = /^[0-9A-Fa-f]{4}/.exec(source.slice(i + 2, i + 6));
      if (braced) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
        continue;
      }
      if (plain) {
        out += `\\x{${plain[0]}}`;
        i += 5;
        continue;
      }
    }
    // Any other escape (\\ included) is copied with the character it escapes.
    out += c + (next ?? '');
    i++;
  }
  return out;
}
