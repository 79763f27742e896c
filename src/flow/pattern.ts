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
}

/** The longest pattern source accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1000;

export class PatternError extends Error {}

/**
 * Compiles `source` (RE2 syntax, JavaScript \u escapes allowed) for the linear-time
 * engine. Throws PatternError with a message fit for a diagnostic.
 */
export function compileLinear(source: string): LinearRegex {
  if (source.length > MAX_PATTERN_LENGTH) throw new PatternError(`the pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH}`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJavaScript(source));
  } catch (err) {
    throw new PatternError(explain(err instanceof Error ? err.message : String(err)));
  }
  return { test: (text) => re.matcher(text).find() };
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
  if (/`\(\?[=!<]/.test(m)) return `${m}: lookahead and lookbehind are not supported (patterns run on a linear-time engine); match the text itself, or test it in a condition`;
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
