/**
 * A strict JSON reader (RFC 8259 grammar, I-JSON's rules on names and strings), in one
 * pass over the text: what it reads is what every consumer of a request body gets.
 *
 * - Syntax is RFC 8259's: JSON whitespace only, no byte order mark, no NaN/Infinity, no
 *   comments, nothing after the value.
 * - Nesting of objects and arrays is bounded (`maxDepth`; the outermost value is depth 1):
 *   deeper is refused before it is read further, so recursion stays shallow.
 * - A key appears at most once per object, compared after unescaping (`"a"` and
 *   `"\u0061"` are the same key); `__proto__` is never a key.
 * - Strings are well-formed Unicode: a surrogate not in a pair (`"\ud800"`) is refused.
 * - Numbers are read exactly (json-number.ts).
 *
 * `value` returns plain JS data (objects with their keys in sorted order, numbers as
 * json-number.ts reads them) and leaves in `text` its canonical JSON text: no whitespace,
 * keys sorted by UTF-16 code units, strings as JSON.stringify writes them, canonical
 * numbers. Two texts of the same JSON value, however spelled, give the same data and the
 * same canonical text. Faults throw `JsonFault` with the offset (in UTF-16 code units).
 */
import { jsonNumber } from './json-number.js';

export type JsonFaultCode = 'BAD_JSON' | 'BAD_REQUEST' | 'BODY_TOO_DEEP';

export class JsonFault extends Error {
  constructor(
    readonly code: JsonFaultCode,
    message: string,
  ) {
    super(message);
  }
}

interface Member {
  key: string;
  /** The key was written as its canonical text (no escapes). */
  plain: boolean;
  value: unknown;
  text: string;
  at: number;
}

const byKey = (a: Member, b: Member) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function sorted(members: Member[]): boolean {
  for (let i = 1; i < members.length; i++) if (members[i - 1]!.key > members[i]!.key) return false;
  return true;
}
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();
const isDigit = (c: number) => c >= 48 && c <= 57;

/** What each one-character escape (the code after the backslash) stands for. */
const SIMPLE_ESCAPES: readonly (string | undefined)[] = (() => {
  const t: (string | undefined)[] = [];
  for (const [c, v] of [
    ['"', '"'],
    ['\\', '\\'],
    ['/', '/'],
    ['b', '\b'],
    ['f', '\f'],
    ['n', '\n'],
    ['r', '\r'],
    ['t', '\t'],
  ])
    t[c!.charCodeAt(0)] = v;
  return t;
})();
export class JsonReader {
  pos = 0;
  /** The canonical JSON text of the last value read by `value`. */
  text = '';
  /**
   * The last value read by `value` was written in its canonical text already (then `text`
   * is a slice of the source, not built: what the service echoes back usually is).
   */
  private canon = true;
  /** The last string read had nothing JSON.stringify escapes (no escapes, controls or surrogates in its text). */
  private plain = true;
  /** Whitespace was skipped (since the innermost container being read began). */
  private spaced = false;

  constructor(
    readonly src: string,
    readonly maxDepth: number,
  ) {}

  fail(code: JsonFaultCode, message: string): never {
    throw new JsonFault(code, message);
  }

  /** A syntax fault at the current position. */
  unexpected(wanted: string): never {
    if (this.pos >= this.src.length)
      this.fail('BAD_JSON', `the body is not valid JSON: it ends where ${wanted} was expected`);
    const c = this.src.codePointAt(this.pos)!;
    const shown =
      c >= 32 && c < 127 ? `'${String.fromCharCode(c)}'` : `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
    this.fail('BAD_JSON', `the body is not valid JSON: ${shown} at offset ${this.pos} where ${wanted} was expected`);
  }

  /** Refuses a byte order mark, then skips whitespace. */
  start(): void {
    if (this.src.charCodeAt(0) === 0xfeff)
      this.fail(
        'BAD_JSON',
        'the body is not valid JSON: it starts with a byte order mark (U+FEFF), which JSON sent over a ' +
          'network must not have',
      );
    this.ws();
  }

  /** After the value: only whitespace may follow. */
  end(): void {
    this.ws();
    if (this.pos < this.src.length) this.unexpected('the end of the body');
  }

  ws(): void {
    const s = this.src;
    let i = this.pos;
    for (let c = s.charCodeAt(i); c === 32 || c === 10 || c === 13 || c === 9; c = s.charCodeAt(++i));
    if (i !== this.pos) this.spaced = true;
    this.pos = i;
  }

  peek(): number {
    return this.src.charCodeAt(this.pos);
  }

  /** Steps over `c` (after whitespace), or fails naming what was wanted. */
  expect(c: number, wanted: string): void {
    this.ws();
    if (this.src.charCodeAt(this.pos) !== c) this.unexpected(wanted);
    this.pos++;
    this.ws();
  }

  /** After a member or element: true if another follows (a comma), false at `close`. */
  next(close: number, wanted: string): boolean {
    this.ws();
    const c = this.src.charCodeAt(this.pos);
    if (c === 44) {
      this.pos++;
      this.ws();
      return true;
    }
    if (c !== close) this.unexpected(wanted);
    this.pos++;
    return false;
  }

  /** An object's key (at its opening quote), unescaped; `__proto__` is refused. */
  key(): string {
    if (this.src.charCodeAt(this.pos) !== 34) this.unexpected('a key (a string)');
    const at = this.pos;
    const k = this.string();
    if (k === '__proto__') this.fail('BAD_REQUEST', `the key "__proto__" at offset ${at} is not allowed`);
    return k;
  }

  duplicate(key: string, at: number): never {
    this.fail(
      'BAD_REQUEST',
      `the key ${JSON.stringify(key.length > 40 ? key.slice(0, 40) + '…' : key)} appears twice in one object ` +
        `(again at offset ${at}): each key may appear once`,
    );
  }

  tooDeep(): never {
    this.fail(
      'BODY_TOO_DEEP',
      `the body nests objects and arrays more than ${this.maxDepth} deep (at offset ${this.pos}): see ` +
        `server.body_depth`,
    );
  }

  /** The string starting at the current quote. */
  string(): string {
    const s = this.src;
    const start = this.pos + 1;
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.pos = i + 1;
        this.plain = true;
        return s.slice(start, i);
      }
      // escapes, control characters and surrogates: the careful way
      if (c === 92 || c < 32 || (c & 0xf800) === 0xd800) return this.slowString(start, i);
    }
    this.pos = s.length;
    return this.unexpected('the end of a string (a quote)');
  }

  private slowString(start: number, from: number): string {
    const s = this.src;
    let out = '';
    let run = start; // the start of the characters not yet copied to `out`
    let i = from;
    for (;;) {
      if (i >= s.length) {
        this.pos = i;
        this.unexpected('the end of a string (a quote)');
      }
      const c = s.charCodeAt(i);
      if (c === 34) break;
      if (c < 32) {
        this.pos = i;
        this.unexpected('a character of a string (control characters must be escaped)');
      }
      if (c !== 92) {
        i++;
        continue;
      }
      out += s.slice(run, i);
      const e = s.charCodeAt(i + 1);
      const simple = SIMPLE_ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        i += 2;
      } else {
        const hex = s.slice(i + 2, i + 6);
        if (e !== 117 || !/^[0-9a-fA-F]{4}$/.test(hex)) {
          this.pos = i;
          this.unexpected('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and 4 hex digits)');
        }
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      }
      run = i;
    }
    out += s.slice(run, i);
    this.plain = false;
    if (!wellFormed(out))
      this.fail(
        'BAD_REQUEST',
        `the string at offset ${start - 1} holds a lone surrogate (a UTF-16 half not in a pair): strings ` +
          `must be valid Unicode`,
      );
    this.pos = i + 1;
    return out;
  }

  /** The number token at the current position (its grammar checked); pos moves past it. */
  number(): string {
    const s = this.src;
    const start = this.pos;
    let i = start;
    if (s.charCodeAt(i) === 45) i++;
    const first = s.charCodeAt(i);
    if (first === 48) i++;
    else if (first >= 49 && first <= 57) while (isDigit(s.charCodeAt(++i)));
    else return this.at(i, 'a digit');
    if (s.charCodeAt(i) === 46) {
      if (!isDigit(s.charCodeAt(++i))) return this.at(i, 'a digit after the decimal point');
      while (isDigit(s.charCodeAt(++i)));
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      const sign = s.charCodeAt(++i);
      if (sign === 43 || sign === 45) i++;
      if (!isDigit(s.charCodeAt(i))) return this.at(i, 'a digit of the exponent');
      while (isDigit(s.charCodeAt(++i)));
    }
    this.pos = i;
    return s.slice(start, i);
  }

  private at(i: number, wanted: string): never {
    this.pos = i;
    return this.unexpected(wanted);
  }

  private literal(word: string, value: boolean | null): boolean | null {
    if (!this.src.startsWith(word, this.pos)) this.unexpected('a JSON value');
    this.pos += word.length;
    this.text = word;
    this.canon = true;
    return value;
  }

  /** Any value, inside a container at `depth` (0 for the outermost value). */
  value(depth: number): unknown {
    const c = this.src.charCodeAt(this.pos);
    switch (c) {
      case 34: {
        const start = this.pos;
        const v = this.string();
        this.canon = this.plain;
        this.text = this.plain ? this.src.slice(start, this.pos) : JSON.stringify(v);
        return v;
      }
      case 123:
        return this.object(depth + 1);
      case 91:
        return this.array(depth + 1);
      case 116:
        return this.literal('true', true);
      case 102:
        return this.literal('false', false);
      case 110:
        return this.literal('null', null);
      default: {
        if (c !== 45 && !isDigit(c)) this.unexpected('a JSON value');
        const token = this.number();
        const n = jsonNumber(token);
        this.canon = n.text === token;
        this.text = n.text;
        return n.value;
      }
    }
  }

  /** The object at the current brace, itself at `depth`. */
  object(depth: number): Record<string, unknown> {
    if (depth > this.maxDepth) this.tooDeep();
    const start = this.pos;
    const outer = this.enter();
    if (this.src.charCodeAt(this.pos) === 125) return this.empty(start, outer, {});
    const members: Member[] = [];
    let canon = true;
    do {
      const at = this.pos;
      const key = this.key();
      const plain = this.plain;
      this.expect(58, "':' after a key");
      const value = this.value(depth);
      members.push({ key, plain, value, text: this.text, at });
      canon &&= plain && this.canon;
    } while (this.next(125, "',' or '}'"));
    // Keys usually come sorted already (the service echoes the canonical text we sent).
    if (!sorted(members)) {
      members.sort(byKey);
      canon = false;
    }
    const o: Record<string, unknown> = {};
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (i > 0 && members[i - 1]!.key === m.key) this.duplicate(m.key, Math.max(m.at, members[i - 1]!.at));
      o[m.key] = m.value;
    }
    if (!this.leave(start, outer, canon))
      this.text =
        '{' + members.map((m) => (m.plain ? '"' + m.key + '"' : JSON.stringify(m.key)) + ':' + m.text).join(',') + '}';
    return o;
  }

  /** The array at the current bracket, itself at `depth`. */
  array(depth: number): unknown[] {
    if (depth > this.maxDepth) this.tooDeep();
    const start = this.pos;
    const outer = this.enter();
    if (this.src.charCodeAt(this.pos) === 93) return this.empty(start, outer, []);
    const values: unknown[] = [];
    const texts: string[] = [];
    let canon = true;
    do {
      values.push(this.value(depth));
      texts.push(this.text);
      canon &&= this.canon;
    } while (this.next(93, "',' or ']'"));
    if (!this.leave(start, outer, canon)) this.text = '[' + texts.join(',') + ']';
    return values;
  }

  /** Steps into a container (past its opening character and whitespace); what `leave` needs of the outer one. */
  private enter(): boolean {
    const outer = this.spaced;
    this.spaced = false;
    this.pos++;
    this.ws();
    return outer;
  }

  /** An empty container, at its closing character. */
  private empty<T>(start: number, outer: boolean, value: T): T {
    this.pos++;
    this.leave(start, outer, true);
    if (!this.canon) this.text = Array.isArray(value) ? '[]' : '{}';
    return value;
  }

  /**
   * Out of the container that began at `start`: when its source is its canonical text
   * (canonical children, no whitespace), that source is `text` and true is returned; else
   * the caller builds `text`.
   */
  private leave(start: number, outer: boolean, children: boolean): boolean {
    const canon = children && !this.spaced;
    if (canon) this.text = this.src.slice(start, this.pos);
    this.canon = canon;
    this.spaced ||= outer;
    return canon;
  }
}
