/**
 * The campaign's CSV, read as a stream (csv-parse: quoting, embedded newlines and commas,
 * a BOM, CRLF, all as RFC 4180 and spreadsheets write them), so a file of any size takes
 * memory for one row at a time.
 *
 * The first row is the header. The number called is the column named `number` (any case),
 * else the first one; the other columns become the flow's variables, named by the header.
 * A row that cannot be called (no number, not E.164, too many cells, variables too large) is
 * yielded as `invalid` with its line and why; a file that cannot be read as CSV at all (an
 * unclosed quote, a row longer than MAX_ROW_CHARS, a header that does not name variables)
 * throws a CsvProblem with its line.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { parse, CsvError, type InfoRecord, type Options } from 'csv-parse';
import { checkE164 } from '../protocol/formats.js';
import { checkVars, OUTBOUND_LIMITS } from '../service/outbound-request.js';
import type { CampaignRow, RowRead } from './types.js';

/**
 * What one row may hold: a row's characters, and the bounds of an outbound call's variables (POST /admin/calls,
 * src/service/outbound-request.ts).
 */
export const ROW_LIMITS = {
  /** A row (its characters, quotes and commas included) at most: past it the file is refused. */
  rowChars: 65_536,
  vars: OUTBOUND_LIMITS.vars,
  nameChars: OUTBOUND_LIMITS.nameChars,
  valueChars: OUTBOUND_LIMITS.valueChars,
  varsBytes: OUTBOUND_LIMITS.varsBytes,
} as const;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A header cell that is a phone number: the file has no header row, its first row would be lost. */
const PHONE_LIKE = /^\+?[0-9 ().-]{6,}$/;
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

export class CsvProblem extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'CsvProblem';
  }
}

interface Columns {
  /** The number's column. */
  number: number;
  /** Variables: column position and name (columns with an empty header are left out). */
  vars: Array<[number, string]>;
  width: number;
}

/** Every row of the CSV, in order. Throws a CsvProblem when the file cannot be read as a campaign CSV. */
export async function* parseRows(input: Readable): AsyncGenerator<RowRead> {
  /** The line where the last row read ended (counted as csv-parse does, then corrected). */
  let lastEnd = 0;
  /** csv-parse counts a CRLF inside a quoted cell as two lines: those seen so far, taken off. */
  let crlfInCells = 0;
  const options: Options = {
    bom: true,
    trim: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    max_record_size: ROW_LIMITS.rowChars,
    // runs as each row is parsed (before it is queued), so lastEnd is right when an error follows
    on_record: ((cells: string[], ctx: InfoRecord) => {
      const breaks = lineBreaksIn(cells);
      crlfInCells += breaks.crlf;
      lastEnd = ctx.lines - crlfInCells;
      return { cells, line: lastEnd - breaks.all };
    }) as unknown as Options['on_record'],
  };
  const parser = parse(options);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let columns: Columns | undefined;
  let index = 0;
  try {
    for await (const { cells, line } of parser as AsyncIterable<{ cells: string[]; line: number }>) {
      if (!columns) {
        columns = header(cells, line);
        continue;
      }
      yield checkRow(cells, index++, line, columns);
    }
  } catch (err) {
    if (err instanceof CsvProblem) throw err;
    if (err instanceof CsvError) {
      // found at the row's end (or the file's): the row began after the last one read
      throw new CsvProblem(lastEnd + 1, csvMessage(err));
    }
    throw err;
  } finally {
    input.unpipe(parser);
    input.destroy();
  }
  if (!columns)
    throw new CsvProblem(
      1,
      'the file is empty: a campaign CSV has a header row (e.g. number,name) and one row per call',
    );
}

/** The rows of a CSV file, those `skip` names left out. */
export async function* readRows(file: string, skip: (index: number) => boolean = () => false): AsyncGenerator<RowRead> {
  for await (const r of parseRows(createReadStream(file))) {
    if (!skip(r.kind === 'row' ? r.row.index : r.index)) yield r;
  }
}

export interface CsvSummary {
  bytes: number;
  /** hex, of the file's bytes: a resumed campaign checks it is the same file. */
  sha256: string;
  rows: number;
  invalid: number;
}

/**
 * Reads the whole file once before any call: its rows counted, its hash, and any CsvProblem found now rather than half
 * way.
 */
export async function scanCsv(file: string): Promise<CsvSummary> {
  const hash = createHash('sha256');
  let bytes = 0;
  const input = createReadStream(file);
  input.on('data', (chunk) => {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  });
  let rows = 0;
  let invalid = 0;
  for await (const r of parseRows(input)) {
    rows++;
    if (r.kind === 'invalid') invalid++;
  }
  return { bytes, sha256: hash.digest('hex'), rows, invalid };
}

function header(cells: string[], line: number): Columns {
  if (cells.length > ROW_LIMITS.vars + 1)
    throw new CsvProblem(
      line,
      `the header has ${cells.length} columns: at most ${ROW_LIMITS.vars + 1} (the number ` +
        `and ${ROW_LIMITS.vars} variables)`,
    );
  const phone = cells.findIndex((c) => PHONE_LIKE.test(c));
  if (phone !== -1)
    throw new CsvProblem(
      line,
      `column ${phone + 1} of the header, "${clip(cells[phone]!)}", is a phone number: the first row must be ` +
        `a header naming the columns (e.g. number,name), else its number would never be called; add one`,
    );
  const at = cells.findIndex((c) => c.toLowerCase() === 'number');
  const number = at === -1 ? 0 : at;
  const vars: Array<[number, string]> = [];
  const seen = new Set<string>();
  cells.forEach((name, i) => {
    if (i === number || name === '') return;
    if (!NAME.test(name) || name.length > ROW_LIMITS.nameChars || RESERVED.has(name)) {
      throw new CsvProblem(
        line,
        `column ${i + 1} of the header, "${clip(name)}", is not a variable name: a letter or _, then ` +
          `letters, digits and _ (${ROW_LIMITS.nameChars} at most), as the flow's vars: name them`,
      );
    }
    if (seen.has(name)) throw new CsvProblem(line, `the header names the column "${name}" twice`);
    seen.add(name);
    vars.push([i, name]);
  });
  return { number, vars, width: cells.length };
}

function checkRow(cells: string[], index: number, line: number, cols: Columns): RowRead {
  const raw = cells[cols.number] ?? '';
  const invalid = (reason: string): RowRead => ({ kind: 'invalid', index, line, number: clip(raw, 64), reason });
  if (cells.length > cols.width && cells.slice(cols.width).some((c) => c !== ''))
    return invalid(`${cells.length} cells, the header has ${cols.width} columns`);
  if (raw === '') return invalid('no number');
  const why = checkE164(raw);
  if (why) return invalid(`number "${clip(raw)}" is not E.164: ${why}`);
  const vars: Record<string, string> = {};
  for (const [i, name] of cols.vars) {
    const v = cells[i];
    if (v === undefined || v === '') continue;
    Object.defineProperty(vars, name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  // the server's own check of an outbound call's vars (its messages), before sending
  const checked = checkVars(vars);
  if (!checked.ok) return invalid(checked.message);
  const row: CampaignRow = { index, line, number: raw, vars };
  return { kind: 'row', row };
}

/** Line breaks inside a row's cells (quoted): the row started `all` lines before it ended; `crlf` of them are CRLF. */
function lineBreaksIn(cells: string[]): { all: number; crlf: number } {
  let all = 0;
  let crlf = 0;
  for (const c of cells) {
    if (c.length === 0 || (!c.includes('\n') && !c.includes('\r'))) continue;
    for (const m of c.matchAll(/\r\n|\n|\r/g)) {
      all++;
      if (m[0].length === 2) crlf++;
    }
  }
  return { all, crlf };
}

function csvMessage(e: CsvError): string {
  switch (e.code) {
    case 'CSV_MAX_RECORD_SIZE':
      return `a row longer than ${ROW_LIMITS.rowChars} characters (an unclosed quote?)`;
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted cell of this row is never closed (the file ends inside it)';
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return 'a quoted cell has characters after its closing quote (a quote inside a quoted cell is written "")';
    default:
      return `not readable as CSV: ${e.message}`;
  }
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
