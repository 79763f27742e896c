/**
 * The emulator's bound on how deep JSON is nested: it refuses a request body or a customer
 * server's reply nested deeper than MAX_DEPTH, measured on the text (src/protocol/json-depth.ts)
 * before any recursive code (lossless-json, JSON.stringify, the YAML composer) can overflow
 * the stack on it.
 */
import { jsonTooDeep as tooDeep } from '../protocol/json-depth.js';

export const MAX_DEPTH = 64;

/** True when `text` opens more than `max` arrays or objects inside one another (strings skipped). */
export function jsonTooDeep(text: string, max = MAX_DEPTH): boolean {
  return tooDeep(text, max);
}

export const TOO_DEEP = `nested deeper than ${MAX_DEPTH} levels of arrays and objects`;
