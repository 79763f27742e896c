/**
 * The did-you-mean of an unknown key in a scenario or routes file: the allowed key nearest
 * in spelling (`erorr` -> `error`), else the one it is a shortening of (`delay` ->
 * `delay_ms`), else the one a word of another tool means here (`response` -> `body`).
 */
import { closest } from '../flow/check-context.js';

/** The allowed key `key` was most likely meant for, if any. */
export function meantKey(
  key: string,
  allowed: readonly string[],
  synonyms: Readonly<Record<string, string>> = {},
): string | undefined {
  const near = closest(key, allowed);
  if (near !== undefined) return near;
  const k = key.toLowerCase();
  if (k.length >= 3) {
    const longer = allowed.find((a) => a.startsWith(`${k}_`) || (a.startsWith(k) && a.length <= k.length + 3));
    if (longer !== undefined) return longer;
  }
  const syn = Object.hasOwn(synonyms, k) ? synonyms[k] : undefined;
  return syn !== undefined && allowed.includes(syn) ? syn : undefined;
}

/** `: did you mean "x"? (allowed: ...)`, or ` (allowed: ...)` when no key is near. */
export function suggestKey(
  key: string,
  allowed: readonly string[],
  synonyms: Readonly<Record<string, string>> = {},
): string {
  const m = meantKey(key, allowed, synonyms);
  return `${m !== undefined ? `: did you mean "${m}"?` : ''} (allowed: ${allowed.join(', ')})`;
}
