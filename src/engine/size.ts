/**
 * How big a value is once stored: the length of its JSON text, counted without building
 * that text and without walking more than `limit` of it. The call-state cap (32 KB by
 * default) is checked on every `set` assignment with this, so a flow that doubles a list
 * on each step is stopped at the cap instead of growing the process until it dies.
 */
import type { Value } from '../flow/model.js';

/** The deepest a lookup's answer may nest (src/protocol/json-depth.ts, read by src/flow too): TOO_DEEP past it. */
export { MAX_BODY_DEPTH } from '../protocol/json-depth.js';

/** The default cap on a call's stored state (its variables included), in bytes. */
export const DEFAULT_MAX_STATE_BYTES = 32 * 1024;

/**
 * The JSON length of `v` (UTF-16 units; each string's quotes, separators and keys
 * counted), or a number above `limit` as soon as the count passes it. Iterative, so a deep
 * value cannot overflow the stack.
 */
export function jsonSize(v: Value | undefined, limit: number): number {
  let n = 0;
  const todo: unknown[] = [v];
  while (todo.length > 0) {
    const x = todo.pop();
    if (typeof x === 'string') n += x.length + 2;
    else if (x === null || x === undefined) n += 4;
    else if (typeof x === 'number' || typeof x === 'boolean') n += 6;
    else if (Array.isArray(x)) {
      n += 2 + x.length;
      for (let i = 0; i < x.length && n <= limit; i++) todo.push(x[i]);
    } else if (typeof x === 'object') {
      n += 2;
      for (const k in x) {
        if (!Object.prototype.hasOwnProperty.call(x, k)) continue;
        n += k.length + 4;
        todo.push((x as Record<string, unknown>)[k]);
        if (n > limit) break;
      }
    } else n += 8;
    if (n > limit) return n;
  }
  return n;
}

/** The UTF-8 size of a text, scanning it only when its length alone does not settle `> limit`. */
export function textOver(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return Buffer.byteLength(text, 'utf8') > limit;
}

/**
 * `text` whole when its UTF-8 size is at most `maxBytes`; else its start, cut on a character boundary, then
 * `…(<its size> bytes)`: at most `maxBytes` in all, the mark included (a text cut once is not cut again). What a
 * client sent is kept so by what the server keeps of it (the call history, traces).
 */
export function clipText(text: string, maxBytes: number): string {
  if (!textOver(text, maxBytes)) return text;
  const mark = `…(${Buffer.byteLength(text, 'utf8')} bytes)`;
  return utf8Head(text, Math.max(0, maxBytes - Buffer.byteLength(mark, 'utf8'))) + mark;
}

/** The longest start of `text` whose UTF-8 encoding is at most `maxBytes` (a surrogate pair is never split). */
function utf8Head(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    // a lone surrogate is written as U+FFFD: 3 bytes
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + n > maxBytes) break;
    bytes += n;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}
