/** src/terminal/printable.ts: outside text made safe for a terminal (docs/security.md, "Terminal output"). */
import { describe, expect, it } from 'vitest';
import { printable, printableColoured, printableLines } from '../../src/terminal/printable.js';

/** Every character a terminal acts on (C0, DEL, C1) or that reorders text (bidi controls). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('printable', () => {
  it('shows C0, DEL and C1 as \\xNN and bidi controls as \\uNNNN', () => {
    expect(printable('a\x1b]0;pwned\x07b\x1b[2J\x1b[31mc')).toBe('a\\x1b]0;pwned\\x07b\\x1b[2J\\x1b[31mc');
    expect(printable('\u009b31m\x7f\b\r\x00')).toBe('\\x9b31m\\x7f\\x08\\x0d\\x00');
    expect(printable('pay \u202eevil\u202c \u2066x\u2069')).toBe('pay \\u202eevil\\u202c \\u2066x\\u2069');
  });

  it('escapes line feeds and tabs too (one line of text)', () => {
    expect(printable('a\nfake line\tb')).toBe('a\\x0afake line\\x09b');
  });

  it('leaves other text as it is: backslashes, accents, emoji, other marks', () => {
    const t = 'Bonjour, épelez \\d+ “ok” ✓ 😀 \u00a0\u200b\u2028';
    expect(printable(t)).toBe(t);
    expect(printableLines(t)).toBe(t);
  });

  it('leaves no unsafe character, whatever the code point', () => {
    const all = Array.from({ length: 0x2100 }, (_, i) => String.fromCharCode(i)).join('');
    expect(printable(all)).not.toMatch(UNSAFE);
    expect(printableLines(all).replace(/[\n\t]/g, '')).not.toMatch(UNSAFE);
  });
});

describe('printableLines', () => {
  it('keeps line feeds and tabs, escapes the rest (a carriage return too)', () => {
    expect(printableLines('a\tb\nc\r\nd\x1b[2K\u202e')).toBe('a\tb\nc\\x0d\nd\\x1b[2K\\u202e');
  });
});

describe('printableColoured', () => {
  it("keeps a formatter's colours (SGR), line feeds and tabs; escapes any other ESC sequence and the rest", () => {
    expect(printableColoured('\x1b[31mERROR\x1b[39m\t\x1b[1;36mmsg\x1b[0m\n')).toBe(
      '\x1b[31mERROR\x1b[39m\t\x1b[1;36mmsg\x1b[0m\n',
    );
    expect(printableColoured('\x1b]0;t\x07 \x1b[2J \x1b[H \u009b31m \u202e \r')).toBe(
      '\\x1b]0;t\\x07 \\x1b[2J \\x1b[H \\x9b31m \\u202e \\x0d',
    );
  });

  it('leaves no unsafe character but the ESC of a colour', () => {
    const all = Array.from({ length: 0x2100 }, (_, i) => String.fromCharCode(i)).join('');
    expect(printableColoured(all).replace(/[\n\t]/g, '')).not.toMatch(UNSAFE);
  });
});
