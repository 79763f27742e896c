/**
 * checkFlow and checkConfig never throw and never report a position outside the text,
 * whatever they are given: garbage, truncations and mutations of real flows.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { checkConfig } from '../../src/config/check.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';

/** Deterministic PRNG (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FILES = readdirSync('flows').filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'));
const EXAMPLES = FILES.map((f) => readFileSync(`flows/${f}`, 'utf8'));

const ODD = [
  '',
  ' ',
  '\n\n\n',
  '~',
  'null',
  '42',
  '"just a string"',
  '[]',
  '- 1\n- 2\n',
  '{',
  '}}}',
  ': :',
  '? [a, b]\n: c\n',
  'a: &x [*x]\n',
  'a: *x\n',
  'version: 1\nversion: 1\n',
  '---\n---\n',
  '%YAML 1.1\n---\na: 1\n',
  'a: !!binary aGVsbG8=\n',
  'a: !custom 1\n',
  'steps: { a: { read: { prompt: [[[]]] } } }\n',
  'version: 1\nstart: a\nsteps:\n  a: { set: { x: .nan, y: .inf, z: 99999999999999999999 } }\n',
  'version: 1\nstart: a\nsteps: { a: { switch: [1, [], {}, { when: 1, goto: [] }] } }\n',
  'version: 1\nstart: [a]\nhandlers: [1]\nvars: 3\nsteps: []\n',
  'version: 1\nstart: a\nhandlers: { on: { read: [1], play: { default: x, error: y, "/(/": z } } }\nsteps: { ' +
    'a: { hangup: 1 } }\n',
  'version: 1\nstart: a\nsteps: { a: { read: { prompt: x }, on: [1], next: {} , save: [] , handlers: 1 } }\n',
  'version: 1\nstart: a\nsteps: { a: { dialout: { targets: [1, [], { number: 1, timeout: "x", y: 1 }] } } }\n',
  'version: 1\nstart: a\nsteps: { a: { play_wav_data: "UklGRg==" }, b: { play_wav_data: 12 } }\n',
  'a: b: c\n',
  '\t\t\t',
  '\u0000\u0001\u0002',
  '\uFEFFversion: 1\n',
  'x'.repeat(10000),
  '['.repeat(5000),
  'a:\n' + '  - '.repeat(400) + '1\n',
  Array.from(
    { length: 12 },
    (_, i) =>
      `l${i}: &l${i} [${Array(10)
        .fill(i === 0 ? '1' : `*l${i - 1}`)
        .join(', ')}]`,
  ).join('\n') + '\n',
];

function sane(text: string, diags: Diagnostic[]): void {
  const lines = text.split(/\r\n|\r|\n/).length;
  for (const d of diags) {
    expect(typeof d.code).toBe('string');
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.line).toBeLessThanOrEqual(lines + 1);
    expect(d.column).toBeGreaterThanOrEqual(1);
    expect(d.message.length).toBeGreaterThan(0);
  }
}

function both(text: string): void {
  const f = checkFlow(text, 'fuzz.yaml');
  sane(text, f.diagnostics);
  expect(f.model === undefined).toBe(f.diagnostics.some((d) => d.severity === 'error'));
  expect(
    f.diagnostics.some((d) => d.code === 'INTERNAL_ERROR'),
    `${JSON.stringify(text.slice(0, 200))}: ${JSON.stringify(f.diagnostics)}`,
  ).toBe(false);
  const c = checkConfig(text, 'callscript.yaml');
  sane(text, c.diagnostics);
  expect(
    c.diagnostics.some((d) => d.code === 'INTERNAL_ERROR'),
    text.slice(0, 200),
  ).toBe(false);
}

describe('robustness', () => {
  it('odd documents', () => {
    for (const t of ODD) both(t);
  });

  it('the alias bomb is refused, not expanded', () => {
    const bomb = ODD[ODD.length - 1]!;
    expect(checkFlow(bomb, 'b.yaml').diagnostics.map((d) => `${d.code}@${d.line}:${d.column}`)).toEqual([
      'ALIAS_LIMIT@6:50',
    ]);
  });

  // one test per example flow: the work is the examples' size, each test's a part of it (under load, one test for
  // all of them ran past the timeout)
  it.each(FILES.map((f, i) => [f, i] as const))('every prefix of the example flow %s', (_f, i) => {
    const text = EXAMPLES[i]!;
    for (let n = 0; n < text.length; n += 37) both(text.slice(0, n));
  });

  it.each(FILES.map((f, i) => [f, i] as const))('random mutations of the example flow %s', (_f, k) => {
    const rand = rng(20240611 + k);
    const pieces = [
      '{',
      '}',
      '[',
      ']',
      ':',
      '- ',
      '"',
      "'",
      '\n',
      '  ',
      '\t',
      '#',
      '&a ',
      '*a',
      '<<: ',
      '{{',
      '}}',
      '/',
      '_',
      '0',
      '-1',
      '99999999999999999999',
      'null',
      'true',
      'TTS|',
      '|',
      'read',
      'next',
      'on',
      'goto',
    ];
    for (let i = 0; i < Math.ceil(400 / EXAMPLES.length); i++) {
      let text = EXAMPLES[k]!;
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * text.length);
        const r = rand();
        if (r < 0.4) text = text.slice(0, at) + pieces[Math.floor(rand() * pieces.length)] + text.slice(at);
        else if (r < 0.8) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rand() * 20));
        else text = text.slice(0, at) + text.slice(Math.floor(rand() * text.length));
      }
      both(text);
    }
  });

  it('random bytes', () => {
    const rand = rng(7);
    for (let i = 0; i < 200; i++) {
      const n = Math.floor(rand() * 200);
      both(Array.from({ length: n }, () => String.fromCharCode(Math.floor(rand() * 128))).join(''));
    }
  });
});
