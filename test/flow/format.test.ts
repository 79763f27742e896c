import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { formatDiagnostic, formatDiagnostics, summarize } from '../../src/flow/format.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';

const SOURCE = ['version: 1', 'start: menu', 'steps:', '  menu:', '    read:', '      promt: "Press 1"', '      max_digits: 1', '    next: menu'].join('\n');

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
    const d: Diagnostic = { code: 'YAML_SYNTAX', severity: 'error', message: 'tab', file: 'f.yaml', line: 10, column: 2 };
    expect(formatDiagnostic(d, src)).toBe(['f.yaml:10:2 error YAML_SYNTAX tab', ' 9 | # 9', '10 | \tx: 1', '   | \t^', '11 | # 11'].join('\n'));
  });

  it('prints the header and hint alone without a source, or when the line is out of range', () => {
    const d: Diagnostic = { code: 'NOT_A_MAP', severity: 'warning', message: 'm', file: 'f.yaml', line: 40, column: 1, hint: 'h' };
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
    expect(out).toBe(['a.yaml:1:1 error X one', '', 'b.yaml:1:3 warning Y two', '1 | k: v', '  |   ^', '2 |'].join('\n'));
  });

  it('counts errors and warnings', () => {
    const e: Diagnostic = { code: 'X', severity: 'error', message: '', file: 'f', line: 1, column: 1 };
    const w: Diagnostic = { ...e, severity: 'warning' };
    expect(summarize([])).toBe('no problems');
    expect(summarize([e, e, w])).toBe('2 errors, 1 warning');
    expect(summarize([w])).toBe('0 errors, 1 warning');
  });
});
