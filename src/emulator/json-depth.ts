/**
 * How deep JSON is nested, read from its text without parsing it: the emulator refuses a
 * request body or a customer server's reply nested deeper than MAX_DEPTH before any
 * recursive code (lossless-json, JSON.stringify, the YAML composer) can overflow the
 * stack on it. V8's JSON.parse itself is not recursive; what comes after it is.
 */
export const MAX_DEPTH = 64;

/** True when `text` opens more than `max` arrays or objects inside one another (strings skipped). */
export function jsonTooDeep(text: string, max = MAX_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const TOO_DEEP = `nested deeper than ${MAX_DEPTH} levels of arrays and objects`;
