import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { codeFrame, formatDiagnostic, formatDiagnostics, summarize } from '../../src/flow/format.js';
import { sourceLines } from '../../src/flow/source-lines.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';
import { bigFlow } from '../helpers/big-flow.js';

const SOURCE = [
  'version: 1',
  'start: menu',
  'steps:',
  '  menu:',
  '    read:',
  '      promt: "Press 1"',
  '      max_digits: 1',
  '    next: menu',
].join('\n');

describe('formatDiagnostic', () => {
  it('prints the position, severity, code, message, a code frame and the hint', () => {
    const d = checkFlow(SOURCE, 'flows/menu.yaml').diagnostics.find((x) => x.code === 'UNKNOWN_KEY')!;
    expect(formatDiagnostic(d, SOURCE)).toBe(
      [
        "flows/menu.yaml:6:7 error UNKNOWN_KEY step 'menu': unknown key 'promt' in read",
        '5 |     read:',
        '6 |       promt: "Press 1"',
        '  |       ^^^^^',
        '7 |       max_digits: 1',
        "hint: did you mean 'prompt'?",
      ].join('\n'),
    );
  });

  it('widens the gutter for two-digit line numbers and keeps tabs in the caret line', () => {
    const src = Array.from({ length: 9 }, (_, i) => `# ${i + 1}`).join('\n') + '\n\tx: 1\n# 11\n';
    const d: Diagnostic = {
      code: 'YAML_SYNTAX',
      severity: 'error',
      message: 'tab',
      file: 'f.yaml',
      line: 10,
      column: 2,
    };
    expect(formatDiagnostic(d, src)).toBe(
      ['f.yaml:10:2 error YAML_SYNTAX tab', ' 9 | # 9', '10 | \tx: 1', '   | \t^', '11 | # 11'].join('\n'),
    );
  });

  it('prints the header and hint alone without a source, or when the line is out of range', () => {
    const d: Diagnostic = {
      code: 'NOT_A_MAP',
      severity: 'warning',
      message: 'm',
      file: 'f.yaml',
      line: 40,
      column: 1,
      hint: 'h',
    };
    expect(formatDiagnostic(d)).toBe('f.yaml:40:1 warning NOT_A_MAP m\nhint: h');
    expect(formatDiagnostic(d, 'a: 1\n')).toBe('f.yaml:40:1 warning NOT_A_MAP m\nhint: h');
  });

  it('uses colours only when asked', () => {
    const d = checkFlow(SOURCE, 'flows/menu.yaml').diagnostics[0]!;
    expect(formatDiagnostic(d, SOURCE)).not.toMatch(/\x1b\[/);
    expect(formatDiagnostic(d, SOURCE, { color: true })).toMatch(/\x1b\[31merror\x1b\[0m/);
  });
});

describe('formatDiagnostics and summarize', () => {
  it('joins diagnostics with a blank line, each with its own file source', () => {
    const a: Diagnostic = { code: 'X', severity: 'error', message: 'one', file: 'a.yaml', line: 1, column: 1 };
    const b: Diagnostic = { code: 'Y', severity: 'warning', message: 'two', file: 'b.yaml', line: 1, column: 3 };
    const out = formatDiagnostics([a, b], new Map([['b.yaml', 'k: v\n']]));
    expect(out).toBe(
      ['a.yaml:1:1 error X one', '', 'b.yaml:1:3 warning Y two', '1 | k: v', '  |   ^', '2 |'].join('\n'),
    );
  });

  it('counts errors and warnings', () => {
    const e: Diagnostic = { code: 'X', severity: 'error', message: '', file: 'f', line: 1, column: 1 };
    const w: Diagnostic = { ...e, severity: 'warning' };
    expect(summarize([])).toBe('no problems');
    expect(summarize([e, e, w])).toBe('2 errors, 1 warning');
    expect(summarize([w])).toBe('0 errors, 1 warning');
  });
});

/** The code frame as it was built before lines were indexed: from the whole text split (the reference). */
function splitFrame(d: Diagnostic, source: string): string {
  const lines = source.split(/\r\n|\r|\n/);
  const at = d.line - 1;
  if (at < 0 || at >= lines.length) return '';
  const width = String(Math.min(lines.length - 1, at + 1) + 1).length;
  const out: string[] = [];
  for (let i = Math.max(0, at - 1); i <= Math.min(lines.length - 1, at + 1); i++) {
    out.push(`${String(i + 1).padStart(width)} | ${lines[i]}`.trimEnd());
    if (i === at) {
      const text = lines[i]!;
      const col = Math.max(1, Math.min(d.column, text.length + 1));
      const span =
        d.endLine === d.line && d.endColumn !== undefined && d.endColumn > col
          ? Math.min(d.endColumn, text.length + 1) - col
          : 1;
      out.push(
        `${''.padStart(width)} | ${text.slice(0, col - 1).replace(/[^\t]/g, ' ')}${'^'.repeat(Math.max(1, span))}`,
      );
    }
  }
  return out.join('\n');
}

describe('code frames from indexed lines', () => {
  it('are the frames of the split text, for every line and line break (\\n, \\r\\n, \\r, none at the end)', () => {
    for (const text of ['', 'a', 'a\n', 'a\r\nb\rc\n\nd', '\r\n\r\n', 'x: 1\r\r\n\ty: 2\n  z: [3, 4]', '\n\n\n']) {
      const lines = text.split(/\r\n|\r|\n/).length;
      for (let line = 0; line <= lines + 1; line++)
        for (const [column, endColumn] of [
          [1, undefined],
          [2, 4],
          [40, 50],
        ] as const) {
          const d: Diagnostic = {
            code: 'X',
            severity: 'error',
            message: 'm',
            file: 'f',
            line,
            column,
            endLine: line,
            endColumn,
          };
          expect(codeFrame(d, text), JSON.stringify({ text, line, column })).toBe(splitFrame(d, text));
          expect(codeFrame(d, sourceLines(text))).toBe(splitFrame(d, text));
        }
    }
  });

  it(
    'formats 10,000 diagnostics of a 10,000-step file, indexing its lines once, each frame as the split text ' +
      'gives it',
    () => {
      const text = bigFlow(10_000);
      const lines = text.split('\n');
      const diags: Diagnostic[] = [];
      lines.forEach((l, i) => {
        const at = l.includes('max_digits: ') ? l.indexOf('max_digits: ') + 12 : l.indexOf('hangup');
        const col = at + 1;
        if (at >= 0)
          diags.push({
            code: 'OUT_OF_BOUNDS',
            severity: 'error',
            message: `line ${i + 1}`,
            file: 'big.yaml',
            line: i + 1,
            column: col,
            endLine: i + 1,
            endColumn: col + 1,
            hint: 'h',
          });
      });
      expect(diags).toHaveLength(10_000);
      const c0 = process.cpuUsage();
      const out = formatDiagnostics(diags, new Map([['big.yaml', text]]));
      const c = process.cpuUsage(c0);
      // the split-per-diagnostic version took minutes here; a generous bound (CPU time) for shared CI machines
      expect((c.user + c.system) / 1000).toBeLessThan(30_000);
      const blocks = out.split('\n\n');
      expect(blocks).toHaveLength(10_000);
      for (const k of [0, 1, 2, 5_000, 9_998, 9_999]) {
        const d = diags[k]!;
        expect(blocks[k]).toBe(
          [`big.yaml:${d.line}:${d.column} error OUT_OF_BOUNDS line ${d.line}`, splitFrame(d, text), 'hint: h'].join(
            '\n',
          ),
        );
      }
      expect(blocks[9_999]).toContain('  |     ^');
    },
  );
});
