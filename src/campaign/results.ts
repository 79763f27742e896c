/**
 * The results CSV: one line per row of the campaign's CSV, in the CSV's order, written with
 * csv-stringify (quoting as spreadsheets read it).
 *
 * Cells come from untrusted places (the CSV's own cells for an invalid row, the server's
 * answers), and a spreadsheet runs a cell that starts with = + - @ (or a tab, a carriage
 * return, their full-width forms) as a formula (CSV injection): such a cell is written
 * with a leading ' (OWASP's advice), except a well-formed E.164 number or a plain integer,
 * which no spreadsheet takes for code.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import type { RowResult } from './types.js';

export const RESULT_COLUMNS = [
  'number',
  'outcome',
  'call_status',
  'last_step',
  'duration_ms',
  'attempts',
  'callid',
  'line',
  'detail',
] as const;

export const RESULTS_HEADER = stringify([RESULT_COLUMNS as unknown as string[]]);

const FORMULA = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const HARMLESS = /^(\+[1-9][0-9]{1,14}|-?[0-9]{1,20})$/;

/** A cell as written: spreadsheet formulas defused. */
export function safeCell(v: string): string {
  return FORMULA.test(v) && !HARMLESS.test(v) ? `'${v}` : v;
}

/** The results file's lines for these results (each ends with \n). */
export function resultLines(results: readonly RowResult[]): string {
  if (results.length === 0) return '';
  return stringify(
    results.map((r) =>
      [
        r.number,
        r.outcome,
        r.callStatus,
        r.lastStep,
        r.durationMs === null ? '' : String(r.durationMs),
        String(r.attempts),
        r.callid,
        String(r.line),
        r.detail,
      ].map(safeCell),
    ),
  );
}

/**
 * The outcomes of the rows a results file has, counted (a resumed campaign's earlier runs):
 * its first `bytes` (those the state counts as final), read as a stream.
 */
export async function countOutcomes(path: string, bytes: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (bytes <= Buffer.byteLength(RESULTS_HEADER)) return counts;
  const parser = createReadStream(path, { end: bytes - 1 }).pipe(parse({ from_line: 2, relax_column_count: true }));
  for await (const cells of parser as AsyncIterable<string[]>) {
    const outcome = cells[1] ?? '';
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
  return counts;
}
