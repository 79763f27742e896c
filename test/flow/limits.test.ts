/**
 * The loader's limits on untrusted files: the file size (FILE_TOO_LARGE) and what aliases
 * repeat (ALIAS_LIMIT), not the number of values a document holds. Whatever stops the
 * loader is one diagnostic, with no follow-on errors after it.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { checkConfig } from '../../src/flow/config.js';
import { MAX_ALIAS_WEIGHT, MAX_FILE_BYTES, loadYaml } from '../../src/flow/yaml.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';

const at = (diags: Diagnostic[]) => diags.map((d) => `${d.code}@${d.line}:${d.column}`);

/** `n` steps a0..a{n-1}, each saying something and going to the next; the last hangs up. */
function chain(n: number, first = 0): string[] {
  return Array.from({ length: n }, (_, k) => {
    const i = first + k;
    return i === first + n - 1 ? `  a${i}: { hangup: {} }` : `  a${i}: { say: "Step ${i}", next: a${i + 1} }`;
  });
}

/** Twelve levels of ten aliases of the level below: 10^12 values once expanded. */
const BOMB = Array.from({ length: 12 }, (_, i) => `  l${i}: &l${i} [${Array(10).fill(i === 0 ? '1' : `*l${i - 1}`).join(', ')}]`);

describe('the file size limit', () => {
  it('refuses a file over 4 MiB with one FILE_TOO_LARGE at 1:1, without parsing it', () => {
    const text = ['version: 1', 'start: a0', 'steps:', ...chain(3)].join('\n') + '\n' + `# ${'x'.repeat(MAX_FILE_BYTES)}\n`;
    const r = checkFlow(text, 'big.yaml');
    expect(at(r.diagnostics)).toEqual(['FILE_TOO_LARGE@1:1']);
    expect(r.diagnostics[0]!.message).toBe(`the file is ${(text.length).toLocaleString('en-US')} bytes; a file may be at most 4,194,304 bytes (4 MiB)`);
    expect(r.model).toBeUndefined();
  });

  it('counts bytes of UTF-8, not characters', () => {
    const text = `a: 1\n# ${'é'.repeat(MAX_FILE_BYTES / 2)}\n`; // fewer characters than the limit, more bytes
    expect(text.length).toBeLessThan(MAX_FILE_BYTES);
    expect(at(loadYaml(text, 'f.yaml').diagnostics)).toEqual(['FILE_TOO_LARGE@1:1']);
  });

  it('takes a file of exactly the limit', () => {
    const head = 'a: 1\n';
    const text = head + '#'.repeat(MAX_FILE_BYTES - head.length - 1) + '\n';
    expect(Buffer.byteLength(text)).toBe(MAX_FILE_BYTES);
    const r = loadYaml(text, 'f.yaml');
    expect(r.diagnostics).toEqual([]);
    expect(r.root?.kind).toBe('map');
  });

  it('applies to config files too', () => {
    expect(at(checkConfig(`# ${'x'.repeat(MAX_FILE_BYTES)}\n`, 'callscript.yaml').diagnostics)).toEqual(['FILE_TOO_LARGE@1:1']);
  });
});

describe('the alias limit', () => {
  it('refuses a billion laughs with one ALIAS_LIMIT at the alias that goes past the limit, and nothing after it', () => {
    const text = ['version: 1', 'start: a0', 'vars:', ...BOMB, 'steps:', ...chain(2000)].join('\n') + '\n';
    const c0 = process.cpuUsage();
    const r = checkFlow(text, 'bomb.yaml');
    const c = process.cpuUsage(c0);
    // l6's first alias: l1..l5 have repeated 2,345,550 characters, one *l5 adds 2,111,111
    expect(at(r.diagnostics)).toEqual(['ALIAS_LIMIT@10:12']);
    expect(r.diagnostics[0]!.message).toBe('the alias *l5 makes the aliases repeat more than 4,194,304 characters of values in all (an alias bomb?)');
    expect(r.diagnostics[0]!.hint).toMatch(/^Aliases may repeat at most 4 MiB of values/);
    expect(r.model).toBeUndefined();
    // nothing is expanded: a generous bound (CPU time) for shared CI machines, not a benchmark
    expect((c.user + c.system) / 1000).toBeLessThan(10_000);
  });

  it('refuses many aliases of a long string (the checkers would scan it once per alias)', () => {
    const long = 'x'.repeat(100_000);
    const n = Math.floor(MAX_ALIAS_WEIGHT / (long.length + 1)) + 1;
    const text = ['version: 1', 'start: a0', 'vars:', `  long: &long "${long}"`, `  many: [${Array(n).fill('*long').join(', ')}]`, 'steps:', ...chain(2)].join('\n') + '\n';
    const r = checkFlow(text, 'long.yaml');
    expect(at(r.diagnostics)).toEqual([`ALIAS_LIMIT@5:${10 + 7 * (n - 1)}`]);
  });

  it('refuses many merges of a list of empty maps (each alias weighs what it repeats, even empty maps)', () => {
    const empties = Array(20_000).fill('{}').join(', ');
    const text = ['version: 1', 'start: a0', 'vars:', `  e: &e [${empties}]`, 'steps:', ...chain(300).map((l, i) => (i === 0 ? l : l.replace('{ ', '{ <<: *e, ')))].join('\n') + '\n';
    const r = checkFlow(text, 'merges.yaml');
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]!.code).toBe('ALIAS_LIMIT');
  });

  it('takes a heavy but reasonable use of aliases: a shared prompt merged into 2,000 steps', () => {
    const steps = Array.from({ length: 2000 }, (_, i) =>
      i === 1999 ? `  a${i}: { hangup: {} }` : `  a${i}: { read: { <<: *ask, prompt: "Menu ${i}" }, on: { "1": a${i + 1}, default: a${i + 1} } }`,
    );
    const text = ['version: 1', 'start: a0', 'vars:', '  ask: &ask { prompt: "Press 1", max_digits: 1, timeout_ms: 5000, attempts: 2 }', 'steps:', ...steps].join('\n') + '\n';
    const r = checkFlow(text, 'merged.yaml');
    expect(r.diagnostics).toEqual([]);
    const step = r.model!.steps.a7!;
    expect(step.kind === 'command' && step.command.params).toMatchObject({ max_digits: 1, timeout_ms: 5000, attempts: 2 });
  });

  it('reports an error inside an anchored value where the anchor is, once per step that uses it', () => {
    const text = ['version: 1', 'start: a0', 'vars:', '  ask: &ask { prompt: "Press 1", max_digits: 99 }', 'steps:', ...Array.from({ length: 3 }, (_, i) => `  a${i}: { read: *ask, on: { default: a3 } }`), '  a3: { hangup: {} }'].join('\n') + '\n';
    const r = checkFlow(text, 'anchored.yaml');
    expect(r.diagnostics.map((d) => `${d.code}@${d.line}:${d.column} ${d.message}`)).toEqual(
      [0, 1, 2].map((i) => `OUT_OF_BOUNDS@4:46 step 'a${i}': max_digits must be between 1 and 20, got 99`),
    );
  });
});

describe('one mistake, one diagnostic', () => {
  it('values nested too deeply stop the loader with one YAML_SYNTAX, none of the 500 steps after it reported', () => {
    const deep = `${'['.repeat(301)}1${']'.repeat(301)}`;
    const text = ['version: 1', 'start: a0', 'steps:', ...chain(3), `  deep: { set: { x: ${deep} } }`, ...chain(500, 3)].join('\n') + '\n';
    const r = checkFlow(text, 'deep.yaml');
    expect(at(r.diagnostics)).toEqual(['YAML_SYNTAX@7:318']);
    expect(r.diagnostics[0]!.message).toBe('values are nested too deeply (over 300 levels)');
  });

  it('an alias bomb inside a step among 2,000 others: one ALIAS_LIMIT, no DUPLICATE_KEY flood', () => {
    const text = ['version: 1', 'start: a0', 'steps:', ...chain(1000), '  bomb:', '    set:', ...BOMB.map((l) => `    ${l}`), ...chain(1000, 1000)].join('\n') + '\n';
    const r = checkFlow(text, 'bomb.yaml');
    expect(at(r.diagnostics)).toEqual(['ALIAS_LIMIT@1012:16']);
  });

  it('a recursive alias: one YAML_SYNTAX, the keys after it not reported', () => {
    const text = ['version: 1', 'start: a0', 'steps:', '  r: &r { set: { x: [*r] } }', ...chain(300)].join('\n') + '\n';
    expect(at(checkFlow(text, 'rec.yaml').diagnostics)).toEqual(['YAML_SYNTAX@4:22']);
  });
});
