/**
 * The quick loader (src/flow/yaml-quick.ts) against the yaml package's path (loadYamlDocument): whenever it takes a
 * file, the tree is exactly the same (kinds, values, types, sources, raw texts, every position) and the yaml package
 * finds nothing wrong in it; whatever it does not handle, it declines. On the repository's YAML files, generated big
 * flows, and seeded mutations of them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quickLoad } from '../../src/flow/yaml-quick.js';
import { loadYaml, loadYamlDocument, MAX_DEPTH } from '../../src/flow/yaml.js';
import { bigFlow } from '../helpers/big-flow.js';
import { rng } from '../helpers/random.js';
import { bigFlow as menuFlow } from '../../bench/gen-flow.js';

const root = new URL('../..', import.meta.url).pathname;
const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: root, encoding: 'utf8' })
  .trim()
  .split('\n')
  .filter((f) => f !== '');

/** `n` lines made by `line`, each ending with a newline. */
const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => `${line(i)}\n`).join('');

/** The tree as plain data: what deep equality compares. */
const data = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;

/** Checks the quick loader on `text`: true when it took it (and gave the yaml package's tree). */
function agrees(text: string, what: string): boolean {
  const quick = quickLoad(text, MAX_DEPTH);
  if (!quick) return false;
  const full = loadYamlDocument(text, 'f.yaml');
  expect(full.diagnostics, what).toEqual([]);
  expect(data(quick), what).toEqual(data(full.root));
  return true;
}

const PIECES = [' ', '  ', ':', ': ', '#', ' #', '"', "'", '{', '}', '[', ']', ',', '- ', '\n', '\t', '\r\n', 'a', '1']
  .concat(['.', '~', '&a ', '*a', '!', '|', '>', 'é', '\\', '0x1', '1.5', 'null', 'true', '<<: ', '? ', '%', '---'])
  .concat(['\u00a0', '\ufeff', '12345678901234567890', '-0', '+1', 'yes'])
  .concat(['{ a: { b: [1, { c: d }] } }', '[[], {}]', '{ a: [ ] }', '[{ x: 1 }, [2]]', '{a: {b: 1}}'])
  .concat(['w'.repeat(1100), `"${'q'.repeat(1030)}"`, '\r', '\u0085', '😀', ' '.repeat(40), '.inf', '0o7', '1e3']);

/** `text` with one random edit: a piece inserted, a character dropped or replaced, a line copied, re-indented. */
function mutate(text: string, next: () => number): string {
  const at = Math.floor(next() * text.length);
  const piece = PIECES[Math.floor(next() * PIECES.length)]!;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const lineEnd = text.indexOf('\n', at) === -1 ? text.length : text.indexOf('\n', at) + 1;
  switch (Math.floor(next() * 6)) {
    case 0:
      return text.slice(0, at) + piece + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + piece + text.slice(at + 1);
    case 3:
      return text.slice(0, lineEnd) + text.slice(lineStart, lineEnd) + text.slice(lineEnd);
    case 4:
      return text.slice(0, lineStart) + '  ' + text.slice(lineStart);
    default:
      return text.slice(0, lineStart) + text.slice(lineStart).replace(/^ {1,2}/, '');
  }
}

describe('the quick YAML loader', () => {
  const taken = files.filter((f) => agrees(readFileSync(`${root}${f}`, 'utf8'), f));

  it("gives the yaml package's tree for every YAML file of the repository it takes, and takes plain flows", () => {
    // the plain ones: a loader that declined everything would pass the comparison above
    expect(taken.length).toBeGreaterThanOrEqual(40);
    expect(taken).toContain('bench/flows/bench.yaml');
    // flow collections inside flow collections: `read: { prompt: { prompt: account }, ... }`
    expect(taken).toContain('flows/verify-customer.yaml');
  });

  it('takes the generated big flows, with the same tree', () => {
    expect(agrees(bigFlow(300), 'big-flow 300')).toBe(true);
    expect(agrees(menuFlow(300), 'gen-flow 300')).toBe(true);
  });

  it('declines or agrees on 1,500 seeded mutations of the files it takes (never a different tree)', () => {
    const next = rng(23);
    const bases = taken.map((f) => readFileSync(`${root}${f}`, 'utf8')).concat([bigFlow(6), menuFlow(4)]);
    let agreed = 0;
    for (let n = 0; n < 1500; n++) {
      let text = bases[n % bases.length]!;
      const edits = 1 + Math.floor(next() * 3);
      for (let e = 0; e < edits; e++) text = mutate(text, next);
      if (agrees(text, `mutation ${n}: ${JSON.stringify(text.slice(0, 2000))}`)) agreed++;
    }
    // most single edits keep a plain file plain: the comparison ran on many
    expect(agreed).toBeGreaterThan(300);
  });

  it('declines a key yaml refuses as too long (KEY_OVER_1024_CHARS), plain or quoted', () => {
    for (const key of ['k'.repeat(1025), `"${'q'.repeat(1030)}"`]) {
      const text = `a: 1\n${key}: v\n`;
      expect(quickLoad(text, MAX_DEPTH)).toBeUndefined();
      expect(loadYaml(text, 'long.yaml').diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([
        ['YAML_SYNTAX', 2, 1],
      ]);
    }
    expect(agrees(`a: 1\n${'k'.repeat(1000)}: v\n`, 'a long key')).toBe(true);
  });

  it('takes flow collections nested on one line, with the same tree', () => {
    const text = 'a: { b: { c: [1, "x", { d: ~ }], e: [] }, f: [[], {}, [y, [z]]] }\nz: [{ k: v }]\n';
    expect(agrees(text, 'nested flows')).toBe(true);
  });

  it('hostile: declines flow collections nested past the depth limit (TOO_DEEP as before), takes them up to it', () => {
    const nested = (n: number) => `a: ${'{ b: '.repeat(n)}1${' }'.repeat(n)}\n`;
    for (let n = MAX_DEPTH - 3; n <= MAX_DEPTH + 3; n++) {
      const full = loadYamlDocument(nested(n), 'deep.yaml');
      // taken only when the yaml package's path finds it within the limit, and then with the same tree
      if (full.diagnostics.length > 0) expect(quickLoad(nested(n), MAX_DEPTH), `${n} levels`).toBeUndefined();
      else agrees(nested(n), `${n} levels`);
    }
    expect(agrees(nested(MAX_DEPTH - 2), 'just within')).toBe(true);
    expect(loadYaml(nested(MAX_DEPTH + 3), 'deep.yaml').diagnostics.map((d) => d.code)).toEqual(['TOO_DEEP']);
    // a million levels on one line: declined at the limit, no stack overflow
    expect(quickLoad(`a: ${'['.repeat(1_000_000)}\n`, MAX_DEPTH)).toBeUndefined();
  });

  it('hostile: declines what is nested past the depth limit (loadYaml then says TOO_DEEP, as before)', () => {
    const deep = Array.from({ length: MAX_DEPTH + 2 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
    expect(quickLoad(deep, MAX_DEPTH)).toBeUndefined();
    expect(loadYaml(deep, 'deep.yaml').diagnostics.map((d) => d.code)).toEqual(['TOO_DEEP']);
    const shallow = Array.from({ length: 10 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
    expect(agrees(shallow, 'shallow')).toBe(true);
  });

  it('hostile: time linear in the file (long lines, many keys, no comment marker anywhere)', () => {
    // each shape 16 times bigger takes less than 64 times as long (the least of 5 runs, the two sizes interleaved; a
    // rescan of the rest of the text per value, as a first version did, is quadratic: 256 times; linear work stays
    // near 16 even on a loaded machine, where a bound of 3 times the size failed once)
    const time = (text: string) => {
      const t = performance.now();
      expect(quickLoad(text, MAX_DEPTH)).toBeDefined();
      return performance.now() - t;
    };
    // text-heavy shapes (few objects per character): a tree too big for the young generation costs a copy by the
    // garbage collector that a small one does not, which a time ratio would take for superlinear work
    const shapes: [string, (k: number) => string, number][] = [
      ['many long lines', (k) => lines(k, (i) => `k${i}: ${'word '.repeat(40)}end`), 500],
      ['a long plain value', (k) => `a: ${'word '.repeat(k * 20)}end\n`, 1000],
      [
        'many flow entries',
        (k) => `a: { ${lines(k, (i) => `k${i}: ${'v'.repeat(60)}`).replaceAll('\n', ', ')}z: 1 }\n`,
        500,
      ],
    ];
    for (const [name, make, size] of shapes) {
      const small = make(size);
      const big = make(size * 16);
      time(small); // warm-up: the loader's code optimised before either is timed
      let least = [Infinity, Infinity];
      for (let r = 0; r < 5; r++) least = [Math.min(least[0]!, time(small)), Math.min(least[1]!, time(big))];
      expect(least[1]! / least[0]!, name).toBeLessThan(64);
    }
  });
});
