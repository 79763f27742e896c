/**
 * The loader's limits on untrusted files: the file size (FILE_TOO_LARGE) and what aliases
 * repeat (ALIAS_LIMIT), not the number of values a document holds. Whatever stops the
 * loader is one diagnostic, with no follow-on errors after it.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { checkConfig } from '../../src/config/check.js';
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
const BOMB = Array.from(
  { length: 12 },
  (_, i) =>
    `  l${i}: &l${i} [${Array(10)
      .fill(i === 0 ? '1' : `*l${i - 1}`)
      .join(', ')}]`,
);

describe('the file size limit', () => {
  it('refuses a file over 2 MiB with one FILE_TOO_LARGE at 1:1, without parsing it', () => {
    const text =
      ['version: 1', 'start: a0', 'steps:', ...chain(3)].join('\n') + '\n' + `# ${'x'.repeat(MAX_FILE_BYTES)}\n`;
    const r = checkFlow(text, 'big.yaml');
    expect(at(r.diagnostics)).toEqual(['FILE_TOO_LARGE@1:1']);
    expect(r.diagnostics[0]!.message).toBe(
      `the file is ${text.length.toLocaleString('en-US')} bytes; a file may be at most 2,097,152 bytes ` +
        `(limits.flow_file_bytes)`,
    );
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
    expect(at(checkConfig(`# ${'x'.repeat(MAX_FILE_BYTES)}\n`, 'callscript.yaml').diagnostics)).toEqual([
      'FILE_TOO_LARGE@1:1',
    ]);
  });
});

describe('the alias limit', () => {
  it(
    'refuses a billion laughs with one ALIAS_LIMIT at the ' + 'alias that goes past the limit, and nothing after it',
    () => {
      const text = ['version: 1', 'start: a0', 'vars:', ...BOMB, 'steps:', ...chain(2000)].join('\n') + '\n';
      const c0 = process.cpuUsage();
      const r = checkFlow(text, 'bomb.yaml');
      const c = process.cpuUsage(c0);
      // l5's ninth alias: l1..l4 have repeated 234,540 characters, each *l4 adds 211,111
      expect(at(r.diagnostics)).toEqual(['ALIAS_LIMIT@9:52']);
      expect(r.diagnostics[0]!.message).toBe(
        'the alias *l4 makes the aliases repeat more than 2,097,152 characters of values in all (an alias bomb?)',
      );
      expect(r.diagnostics[0]!.hint).toMatch(/^Aliases may repeat at most 2 MiB of values/);
      expect(r.model).toBeUndefined();
      // nothing is expanded: a generous bound (CPU time) for shared CI machines, not a benchmark
      expect((c.user + c.system) / 1000).toBeLessThan(10_000);
    },
  );

  it('refuses many aliases of a long string (the checkers would scan it once per alias)', () => {
    const long = 'x'.repeat(100_000);
    const n = Math.floor(MAX_ALIAS_WEIGHT / (long.length + 1)) + 1;
    const text =
      [
        'version: 1',
        'start: a0',
        'vars:',
        `  long: &long "${long}"`,
        `  many: [${Array(n).fill('*long').join(', ')}]`,
        'steps:',
        ...chain(2),
      ].join('\n') + '\n';
    const r = checkFlow(text, 'long.yaml');
    expect(at(r.diagnostics)).toEqual([`ALIAS_LIMIT@5:${10 + 7 * (n - 1)}`]);
  });

  it('refuses many merges of a list of empty maps (each alias weighs what it repeats, even empty maps)', () => {
    const empties = Array(20_000).fill('{}').join(', ');
    const text =
      [
        'version: 1',
        'start: a0',
        'vars:',
        `  e: &e [${empties}]`,
        'steps:',
        ...chain(300).map((l, i) => (i === 0 ? l : l.replace('{ ', '{ <<: *e, '))),
      ].join('\n') + '\n';
    const r = checkFlow(text, 'merges.yaml');
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]!.code).toBe('ALIAS_LIMIT');
  });

  it('takes a heavy but reasonable use of aliases: a shared prompt merged into 2,000 steps', () => {
    const steps = Array.from({ length: 2000 }, (_, i) =>
      i === 1999
        ? `  a${i}: { hangup: {} }`
        : `  a${i}: { read: { <<: *ask, prompt: "Menu ${i}" }, on: { "1": a${i + 1}, default: a${i + 1} } }`,
    );
    const text =
      [
        'version: 1',
        'start: a0',
        'vars:',
        '  ask: &ask { prompt: "Press 1", max_digits: 1, timeout_ms: 5000, attempts: 2 }',
        'steps:',
        ...steps,
      ].join('\n') + '\n';
    const r = checkFlow(text, 'merged.yaml');
    expect(r.diagnostics).toEqual([]);
    const step = r.model!.steps.a7!;
    expect(step.kind === 'command' && step.command.params).toMatchObject({
      max_digits: 1,
      timeout_ms: 5000,
      attempts: 2,
    });
  });

  it('reports an error inside an anchored value where the anchor is, once per step that uses it', () => {
    const text =
      [
        'version: 1',
        'start: a0',
        'vars:',
        '  ask: &ask { prompt: "Press 1", max_digits: 99 }',
        'steps:',
        ...Array.from({ length: 3 }, (_, i) => `  a${i}: { read: *ask, on: { default: a${i + 1} } }`),
        '  a3: { hangup: {} }',
      ].join('\n') + '\n';
    const r = checkFlow(text, 'anchored.yaml');
    expect(r.diagnostics.map((d) => `${d.code}@${d.line}:${d.column} ${d.message}`)).toEqual(
      [0, 1, 2].map((i) => `OUT_OF_BOUNDS@4:46 step 'a${i}': max_digits must be between 1 and 20, got 99`),
    );
  });
});

describe('one mistake, one diagnostic', () => {
  it(
    'values nested more than 64 levels deep stop the loader with one TOO_DEEP at the 65th level, none of the ' +
      '500 steps after it reported',
    () => {
      const deep = `${'['.repeat(70)}1${']'.repeat(70)}`;
      const text =
        ['version: 1', 'start: a0', 'steps:', ...chain(3), `  deep: { set: { x: ${deep} } }`, ...chain(500, 3)].join(
          '\n',
        ) + '\n';
      const r = checkFlow(text, 'deep.yaml');
      // root map 0, steps 1, deep 2, set 3, x's first list 4: the 65th level is the 62nd [ (column 21 + 61)
      expect(at(r.diagnostics)).toEqual(['TOO_DEEP@7:82']);
      expect(r.diagnostics[0]!.message).toBe('values are nested more than 64 levels deep');
      expect(r.diagnostics[0]!.hint).toMatch(/^Flows never need such depth/);
    },
  );

  it(
    '3,000 or a million levels are refused before the YAML parser sees them (it recurses, and takes seconds ' +
      'and a gigabyte on a million): one TOO_DEEP',
    () => {
      for (const n of [3000, 1_000_000]) {
        for (const [open, close] of [
          ['[', ']'],
          ['{a: ', '}'],
        ] as const) {
          const text =
            [
              'version: 1',
              'start: a0',
              'vars:',
              `  x: ${open.repeat(n)}1${close.repeat(n)}`,
              'steps:',
              ...chain(3),
            ].join('\n') + '\n';
          const c0 = process.cpuUsage();
          // a raised file limit: 5 MB of nesting
          const r = checkFlow(text, 'deep.yaml', { maxFileBytes: 16 * 1024 * 1024 });
          const c = process.cpuUsage(c0);
          // past 256 levels by the lexer's bound: the 255th open bracket (two lines' indentations are open)
          expect(at(r.diagnostics), `${n} ${open}`).toEqual([`TOO_DEEP@4:${6 + 254 * open.length}`]);
          expect(r.diagnostics[0]!.message).toBe('values are nested more than 64 levels deep');
          // the lexer stops at the first token past the bound: a generous bound for shared machines, not a benchmark
          expect((c.user + c.system) / 1000).toBeLessThan(5_000);
        }
      }
    },
  );

  it('block nesting counts too: 300 levels of indentation, or of "- " on one line, are one TOO_DEEP', () => {
    let indented = 'version: 1\nstart: a0\nvars:\n';
    for (let i = 0; i < 300; i++) indented += `${' '.repeat(i + 2)}k${i}:\n`;
    indented += `${' '.repeat(302)}v\nsteps:\n${chain(3).join('\n')}\n`;
    expect(at(checkFlow(indented, 'block.yaml').diagnostics).map((a) => a.split('@')[0])).toEqual(['TOO_DEEP']);
    const compact =
      ['version: 1', 'start: a0', 'vars:', `  x: ${'- '.repeat(300)}1`, 'steps:', ...chain(3)].join('\n') + '\n';
    expect(at(checkFlow(compact, 'compact.yaml').diagnostics).map((a) => a.split('@')[0])).toEqual(['TOO_DEEP']);
  });

  it('an alias bomb inside a step among 2,000 others: one ALIAS_LIMIT, no DUPLICATE_KEY flood', () => {
    const text =
      [
        'version: 1',
        'start: a0',
        'steps:',
        ...chain(1000),
        '  bomb:',
        '    set:',
        ...BOMB.map((l) => `    ${l}`),
        ...chain(1000, 1000),
      ].join('\n') + '\n';
    const r = checkFlow(text, 'bomb.yaml');
    expect(at(r.diagnostics)).toEqual(['ALIAS_LIMIT@1011:56']);
  });

  it('a recursive alias: one YAML_SYNTAX, the keys after it not reported', () => {
    const text = ['version: 1', 'start: a0', 'steps:', '  r: &r { set: { x: [*r] } }', ...chain(300)].join('\n') + '\n';
    expect(at(checkFlow(text, 'rec.yaml').diagnostics)).toEqual(['YAML_SYNTAX@4:22']);
  });
});
