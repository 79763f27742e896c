/** The campaign's CSV reader: columns, line numbers, invalid rows, and hostile files. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { CsvProblem, parseRows, scanCsv, ROW_LIMITS, type CsvSummary } from '../../src/campaign/rows.js';
import type { RowRead } from '../../src/campaign/types.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'campaign-rows-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function all(text: string | Buffer): Promise<RowRead[]> {
  const out: RowRead[] = [];
  for await (const r of parseRows(Readable.from([typeof text === 'string' ? Buffer.from(text) : text]))) out.push(r);
  return out;
}

/**
 * scanCsv(file) on a worker thread whose heap (old generation) is capped at `mb` MB: a reader that held the rows would
 * run out of it (ERR_WORKER_OUT_OF_MEMORY) whatever the garbage collector does meanwhile. The sources are loaded
 * through tsx (as src/registry/checker.ts does for its worker).
 */
function scanWithin(file: string, mb: number): Promise<CsvSummary> {
  const worker = new Worker(SCAN, {
    eval: true,
    workerData: {
      tsx: import.meta.resolve('tsx/esm/api'),
      entry: new URL('../../src/campaign/rows.ts', import.meta.url).href,
      file,
    },
    resourceLimits: { maxOldGenerationSizeMb: mb },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (s: CsvSummary) => {
      resolve(s);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) without an answer`)));
  });
}
const SCAN = `const { workerData, parentPort } = require('node:worker_threads');
import(workerData.tsx)
  .then(({ tsImport }) => tsImport(workerData.entry, workerData.entry))
  .then((m) => m.scanCsv(workerData.file))
  .then((s) => parentPort.postMessage(s));`;

async function problem(text: string | Readable): Promise<CsvProblem> {
  try {
    for await (const _ of parseRows(typeof text === 'string' ? Readable.from([Buffer.from(text)]) : text)) void _;
  } catch (e) {
    if (e instanceof CsvProblem) return e;
    throw e;
  }
  throw new Error('no problem found');
}

describe('columns', () => {
  it('the number column, by name in any place, the others as variables; empty cells left out', async () => {
    const rows = await all('name,Number,appointment\nAnn,+33612345678,Monday 10:00\nBob,+442079460123,\n');
    expect(rows).toEqual([
      {
        kind: 'row',
        row: { index: 0, line: 2, number: '+33612345678', vars: { name: 'Ann', appointment: 'Monday 10:00' } },
      },
      { kind: 'row', row: { index: 1, line: 3, number: '+442079460123', vars: { name: 'Bob' } } },
    ]);
  });

  it('without a number column, the first column is the number', async () => {
    const rows = await all('phone,name\n+33612345678,Ann\n');
    expect(rows).toEqual([{ kind: 'row', row: { index: 0, line: 2, number: '+33612345678', vars: { name: 'Ann' } } }]);
  });

  it('reads a BOM, CRLF, quoted cells with commas, quotes and newlines, blank lines, spaces around cells', async () => {
    const rows = await all('\ufeffnumber,note\r\n+33612345678,"a, ""b""\r\nc"\r\n\r\n +33612345679 , x \r\n');
    expect(rows).toEqual([
      { kind: 'row', row: { index: 0, line: 2, number: '+33612345678', vars: { note: 'a, "b"\r\nc' } } },
      { kind: 'row', row: { index: 1, line: 5, number: '+33612345679', vars: { note: 'x' } } },
    ]);
  });

  it('a header that does not name variables, or names one twice, stops the file at line 1', async () => {
    expect(await problem('number,first name\n+33612345678,Ann\n')).toMatchObject({
      line: 1,
      message: expect.stringContaining('column 2 of the header, "first name", is not a variable name'),
    });
    expect(await problem('number,a,a\n')).toMatchObject({ line: 1, message: 'the header names the column "a" twice' });
    expect(await problem('number,__proto__\n')).toMatchObject({ line: 1 });
    expect(await problem('')).toMatchObject({ line: 1, message: expect.stringContaining('the file is empty') });
  });

  it(
    'a file without a header (its first row a number) is ' + 'refused at line 1, not read with its first number lost',
    async () => {
      const msg = (cell: string, col = 1) =>
        `column ${col} of the header, "${cell}", is a phone number: the first row must be a header naming the ` +
        `columns (e.g. number,name), else its number would never be called; add one`;
      expect(await problem('+33611111510,Ann\n+33611111511,Bob\n')).toMatchObject({
        line: 1,
        message: msg('+33611111510'),
      });
      expect(await problem('\n\nname,06 11 11 15 10\nAnn,+33611111510\n')).toMatchObject({
        line: 3,
        message: msg('06 11 11 15 10', 2),
      });
      expect(await problem('(415) 555-0123\n')).toMatchObject({ line: 1, message: msg('(415) 555-0123') });
      // names with digits are still names
      expect(await all('number,code2024\n+33611111510,x\n')).toEqual([
        { kind: 'row', row: { index: 0, line: 2, number: '+33611111510', vars: { code2024: 'x' } } },
      ]);
    },
  );
});

describe('invalid rows, with their lines', () => {
  it('are yielded as invalid, in place, the other rows going on', async () => {
    const text = [
      'number,name', //                       1
      '+33612345678,Ann', //                  2
      '0612345678,Bob', //                    3  not E.164
      '', //                                  4
      ',Carl', //                             5  no number
      '+33612345679,"Dan', //                 6  a quoted cell over two lines
      'iel"', //                              7
      '+3361234,Eve', //                      8  not a possible number
      '+33612345670,Fay,extra', //            9  a cell too many
      '+33612345671,Gus,,,', //              10  empty cells past the header: fine
      `+33612345672,${'x'.repeat(1025)}`, // 11  a value too long
      '',
    ].join('\n');
    const rows = await all(text);
    const brief = rows.map((r) =>
      r.kind === 'row' ? [r.row.line, 'row', r.row.number] : [r.line, 'invalid', r.number, r.reason],
    );
    expect(brief).toEqual([
      [2, 'row', '+33612345678'],
      [
        3,
        'invalid',
        '0612345678',
        'number "0612345678" is not E.164: an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. ' +
          '+33123456789)',
      ],
      [5, 'invalid', '', 'no number'],
      [6, 'row', '+33612345679'],
      [8, 'invalid', '+3361234', 'number "+3361234" is not E.164: not a possible phone number for its country code'],
      [9, 'invalid', '+33612345670', '3 cells, the header has 2 columns'],
      [10, 'row', '+33612345671'],
      [11, 'invalid', '+33612345672', `vars.name is 1025 characters long, at most ${ROW_LIMITS.valueChars}`],
    ]);
    expect(rows.map((r) => (r.kind === 'row' ? r.row.index : r.index))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('an unclosed quote stops the file at the row that opens it', async () => {
    expect(await problem('number,name\n+33612345678,Ann\n+33612345679,"Bob\n+33612345670,Carl\n')).toMatchObject({
      line: 3,
      message: expect.stringContaining('never closed'),
    });
  });
});

describe('hostile files', () => {
  it('a row of 10,000 columns is one invalid row; a header of 10,000 columns is refused', async () => {
    const wide = Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',');
    const rows = await all(`number,name\n+33612345678,${wide}\n+33612345679,Ann\n`);
    expect(rows[0]).toEqual({
      kind: 'invalid',
      index: 0,
      line: 2,
      number: '+33612345678',
      reason: '10001 cells, the header has 2 columns',
    });
    expect(rows[1]).toMatchObject({ kind: 'row', row: { line: 3 } });
    expect(await problem(`number,${wide}\n`)).toMatchObject({
      line: 1,
      message:
        `the header has 10001 columns: at most ${ROW_LIMITS.vars + 1} (the number and ${ROW_LIMITS.vars} ` +
        `variables)`,
    });
  });

  it(
    'a 100 MB row (no line break, or an unclosed quote) is refused after reading ROW_LIMITS.rowChars of it, ' +
      'not 100 MB',
    async () => {
      for (const start of ['number,name\n+33612345678,', 'number,name\n+33612345678,"']) {
        let sent = 0;
        const chunk = Buffer.alloc(1 << 20, 'a');
        const stream = Readable.from(
          (function* () {
            yield Buffer.from(start);
            for (let i = 0; i < 100; i++) {
              sent += chunk.length;
              yield chunk;
            }
          })(),
        );
        const p = await problem(stream);
        expect(p).toMatchObject({
          line: 2,
          message: `a row longer than ${ROW_LIMITS.rowChars} characters (an unclosed quote?)`,
        });
        expect(sent).toBeLessThan(8 << 20);
      }
    },
  );

  it('a file of 200,000 rows (27 MB) is read as a stream: rows counted, memory bounded', async () => {
    const file = join(dir, 'big.csv');
    const out = createWriteStream(file);
    out.write('number,name,code,note\n');
    const note = 'x'.repeat(100);
    for (let i = 0; i < 200_000; i += 10_000) {
      let block = '';
      for (let j = i; j < i + 10_000; j++)
        block +=
          j % 100_000 === 7
            ? `bad${j},x,1,${note}\n`
            : `+336${String(10_000_000 + j).slice(-8)},n${j},${j},${note}${j}\n`;
      if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((r) => out.end(() => r()));
    // held, these rows take some 70 MB: they would not fit in the worker's 40 MB (a stream needs less than 16)
    const s = await scanWithin(file, 40);
    expect(s.rows).toBe(200_000);
    expect(s.invalid).toBe(2);
    expect(s.bytes).toBeGreaterThan(25_000_000);
    expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
  }, 180_000);

  it("formula cells stay text in the rows (their escaping is the results writer's)", async () => {
    const rows = await all('number,name\n=cmd|\' /C calc\'!A0,x\n+33612345678,"=HYPERLINK(""http://evil"")"\n');
    expect(rows[0]).toMatchObject({ kind: 'invalid', number: "=cmd|' /C calc'!A0" });
    expect(rows[1]).toMatchObject({ kind: 'row', row: { vars: { name: '=HYPERLINK("http://evil")' } } });
  });
});

it('scanCsv reports a CsvProblem of a file, and hashes the bytes', async () => {
  const f = join(dir, 'a.csv');
  await writeFile(f, 'number\n+33612345678\nnope\n');
  expect(await scanCsv(f)).toEqual({ bytes: 25, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), rows: 2, invalid: 1 });
});
