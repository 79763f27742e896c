/**
 * Text from outside (callers, flows, scenario and caller files, stores, the service, remote servers) made safe to
 * write to a terminal. A terminal acts on control characters: ESC and CSI (0x9b) start sequences that set the
 * window title, clear the screen, move the cursor or hide text; BEL rings; CR and backspace write over what is
 * shown; bidi overrides reorder it (Trojan Source). Where the tools render such text, each of these characters is
 * shown as an escape the reader sees and the terminal ignores: `\xNN` for C0, DEL and C1, `\uNNNN` for the bidi
 * embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069). The tools' own colours and line breaks
 * are added around the escaped text (docs/security.md, "Terminal output").
 */

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same but line feeds and tabs. */
const UNSAFE_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same but line feeds, tabs and colours (SGR sequences: ESC [ digits and semicolons m). */
const UNSAFE_BUT_COLOURS =
  /\u001b(?!\[[0-9;]*m)|[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (c: string): string => {
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};

/** Outside text shown on one line: every control character escaped, line feeds and tabs too. */
export function printable(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/**
 * Outside text of several lines (a message that holds a code frame, a file's line): the same, but line feeds and
 * tabs stay (a carriage return is escaped: it writes over the line).
 */
export function printableLines(text: string): string {
  return text.replace(UNSAFE_BUT_LINES, escaped);
}

/**
 * A formatter's coloured lines (pino-pretty's log lines, which hold no ESC of their own data): the same as
 * printableLines, but SGR sequences stay (ESC [ digits ; m sets colours and styles, nothing else); any other ESC is
 * escaped.
 */
export function printableColoured(text: string): string {
  return text.replace(UNSAFE_BUT_COLOURS, escaped);
}
