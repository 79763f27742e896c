/**
 * Result keys of `on:` maps: exact values, `/regex/` and Asterisk `_1XX` patterns (both
 * turned into anchored regular expressions), and what a command can possibly return.
 */
import type { ResultSet } from '../protocol/commands.js';
import { ACTION_SPECS, type ActionName } from './actions.js';
import { compileLinear, linearError } from './pattern.js';

export type ResultKey =
  | { kind: 'default' }
  | { kind: 'error' }
  | { kind: 'exact'; value: string }
  | { kind: 'pattern'; source: string; regex: string; minLen: number; maxLen: number; asterisk: boolean };

/** Parses a key of `on:`; returns a reason string when the key is a malformed pattern. */
export function parseResultKey(key: string): ResultKey | string {
  if (key === 'default') return { kind: 'default' };
  if (key === 'error') return { kind: 'error' };
  if (key.startsWith('/')) return parseRegexKey(key);
  if (key.startsWith('_')) return parseAsterisk(key);
  return { kind: 'exact', value: key };
}

function parseRegexKey(key: string): ResultKey | string {
  const m = /^\/([\s\S]*)\/([a-z]*)$/.exec(key);
  if (!m || key.length < 2) return 'a regular expression is written between two slashes: "/^[0-9]{4}$/"';
  if (m[2]) return `flags (/${m[2]}) are not supported: results are matched as written`;
  if (m[1] === '') return 'the regular expression is empty';
  const regex = `^(?:${m[1]})$`;
  const bad = linearError(regex);
  if (bad) return `invalid regular expression: ${bad}`;
  return { kind: 'pattern', source: key, regex, minLen: 0, maxLen: Infinity, asterisk: false };
}

/** Asterisk dialplan pattern: X 0-9, Z 1-9, N 2-9, [..] a class, `.` one or more, `!` zero or more. */
export function parseAsterisk(key: string): ResultKey | string {
  const body = key.slice(1);
  let re = '';
  let minLen = 0;
  let maxLen = 0;
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '-' || c === ' ') {
      i++;
      continue;
    }
    if (c === '[') {
      const close = body.indexOf(']', i + 1);
      if (close < 0) return `unclosed '[' in the Asterisk pattern ${key}`;
      const inner = body.slice(i + 1, close);
      if (!/^(?:[0-9*#](?:-[0-9])?)+$/.test(inner))
        return `'[${inner}]' is not a class of digits such as [1-5] or [258]`;
      for (const r of inner.matchAll(/([0-9])-([0-9])/g))
        if (r[1]! > r[2]!) return `the range ${r[0]} in ${key} is backwards`;
      re += `[${inner.replace(/[*#]/g, (x) => `\\${x}`)}]`;
      minLen++;
      maxLen++;
      i = close + 1;
      continue;
    }
    switch (c.toUpperCase()) {
      case 'X':
        re += '[0-9]';
        break;
      case 'Z':
        re += '[1-9]';
        break;
      case 'N':
        re += '[2-9]';
        break;
      case '.':
        re += '.+';
        minLen++;
        maxLen = Infinity;
        i++;
        continue;
      case '!':
        re += '.*';
        maxLen = Infinity;
        i++;
        continue;
      default:
        if (/[0-9]/.test(c)) re += c;
        else if (c === '*' || c === '#') re += `\\${c}`;
        else return `'${c}' is not allowed in an Asterisk pattern (use digits, * #, X, Z, N, [..], . and !)`;
    }
    minLen++;
    maxLen++;
    i++;
  }
  if (re === '') return 'the Asterisk pattern is empty after its _';
  return { kind: 'pattern', source: key, regex: `^${re}$`, minLen, maxLen, asterisk: true };
}

const DTMF_KEYS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*'];

/** Every digit string a read can return when max_digits is small (else undefined). */
export function enumerateDigits(maxDigits: number): string[] | undefined {
  if (maxDigits > 3) return undefined;
  const out: string[] = [];
  let layer = [''];
  for (let n = 1; n <= maxDigits; n++) {
    layer = layer.flatMap((p) => DTMF_KEYS.map((k) => p + k));
    out.push(...layer);
  }
  return out;
}

export function resultSetText(name: ActionName, set: ResultSet, maxDigits: number): string {
  switch (set.kind) {
    case 'enum':
      return `${name} returns ${set.values.join(', ')}`;
    case 'digits':
      return (
        `${name} returns ${maxDigits > 1 ? `1 to ${maxDigits} keys` : 'one key'} of 0-9 and * ` +
        `(max_digits: ${maxDigits}), or ${set.also.join(', ')}`
      );
    case 'any':
      return `${name} returns ${set.doc}, which cannot be known in advance`;
    case 'none':
      return `${name} returns no result`;
  }
}

/** null when the command can return something the key matches, else why not. */
export function impossibility(name: ActionName, key: ResultKey, maxDigits: number): string | null {
  const set = ACTION_SPECS[name].results;
  if (key.kind === 'default' || key.kind === 'error') return null;
  const what = resultSetText(name, set, maxDigits);
  if (set.kind === 'none') return `${what}: only next/default and error apply`;
  if (set.kind === 'any')
    return key.kind === 'exact' ? `${what}: match it with a /pattern/ or default, or keep it with save:` : null;
  if (set.kind === 'enum') {
    if (key.kind === 'exact') return set.values.includes(key.value) ? null : `${what}; '${key.value}' can never happen`;
    const re = compileLinear(key.regex);
    return set.values.some((v) => re.test(v)) ? null : `${what}; the pattern ${key.source} matches none of them`;
  }
  // digits
  if (key.kind === 'exact') {
    if (set.also.includes(key.value)) return null;
    if (!/^[0-9*]+$/.test(key.value)) {
      const hash = key.value.includes('#') ? ' (# ends the input and is not part of the result)' : '';
      return `${what}; '${key.value}' can never happen${hash}`;
    }
    return key.value.length > maxDigits ? `${what}; '${key.value}' has ${key.value.length} keys` : null;
  }
  if (key.asterisk && key.minLen > maxDigits) return `${what}; ${key.source} needs at least ${key.minLen} keys`;
  if (key.asterisk && key.regex.includes('#')) return `${what}; # ends the input and is never part of the result`;
  const all = enumerateDigits(maxDigits);
  if (all) {
    const re = compileLinear(key.regex);
    if (![...all, ...set.also].some((v) => re.test(v)))
      return `${what}; the pattern ${key.source} matches none of them`;
  }
  return null;
}
