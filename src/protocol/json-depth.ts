/**
 * How deep JSON nests arrays and objects (the outermost one is level 1), measured without
 * recursion: from its text, before parsing it, or from a parsed value. What reads JSON from
 * outside (a lookup's answer, a request to the emulator) bounds its depth with these before
 * any recursive code (JSON.stringify, masking, templates, lossless-json, the YAML composer)
 * can overflow the stack on it. V8's JSON.parse itself is not recursive, but deep text is
 * slow to parse (1 MiB of `[`: half a second): the text is measured first.
 */

/**
 * The deepest a lookup's answer may nest arrays and objects (the outermost is level 1): a deeper one is the step's
 * error TOO_DEEP. Its body is saved in the call's variables, which are serialised, masked and rendered by recursive
 * code: 64 levels stay far from the stack's limit (a few thousand), and real answers nest a handful. What a flow
 * makes itself is bounded alike: CEL makes no value deeper (src/flow/expr.ts), and reads none deeper than a saved
 * answer (`{ status, body }`, a level more).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * True when `text` opens more than `max` arrays or objects inside one another (strings
 * skipped). Exact for JSON; text that is not JSON may be either (its parse fails anyway).
 */
export function jsonTooDeep(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // to the string's closing quote: the next one not escaped (preceded by an even run of backslashes)
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return false;
        let b = q - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** True when the value `v` nests arrays and objects more than `max` levels deep. */
export function nestedDeeper(v: unknown, max: number): boolean {
  const values: unknown[] = [v];
  const levels: number[] = [1];
  while (values.length > 0) {
    const x = values.pop();
    const level = levels.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (level > max) return true;
    for (const y of Array.isArray(x) ? x : Object.values(x))
      if (y !== null && typeof y === 'object') {
        values.push(y);
        levels.push(level + 1);
      }
  }
  return false;
}
