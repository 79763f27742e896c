/**
 * How deep JSON nests (src/protocol/json-depth.ts), from its text and from a value: exact at
 * the bound, strings skipped whatever they hold, and iterative (100,000 levels measured
 * without overflowing the stack).
 */
import { describe, expect, it } from 'vitest';
import { jsonTooDeep, nestedDeeper } from '../../src/protocol/json-depth.js';

const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('jsonTooDeep (the text)', () => {
  it('exact at the bound, for arrays, objects and both', () => {
    expect(jsonTooDeep(arrays(64), 64)).toBe(false);
    expect(jsonTooDeep(arrays(65), 64)).toBe(true);
    expect(jsonTooDeep(objects(64), 64)).toBe(false);
    expect(jsonTooDeep(objects(65), 64)).toBe(true);
    expect(jsonTooDeep(`[1,{"b":${arrays(62)}},[]]`, 64)).toBe(false);
    expect(jsonTooDeep(`[1,{"b":${arrays(63)}},[]]`, 64)).toBe(true);
    // siblings do not add up
    expect(jsonTooDeep(`[${Array.from({ length: 100 }, () => arrays(60)).join(',')}]`, 64)).toBe(false);
    expect(jsonTooDeep('', 64)).toBe(false);
    expect(jsonTooDeep('42', 0)).toBe(false);
    expect(jsonTooDeep('[]', 0)).toBe(true);
  });

  it('skips strings: brackets, escaped quotes and backslashes inside them', () => {
    expect(jsonTooDeep(JSON.stringify({ t: '['.repeat(1000) }), 2)).toBe(false);
    expect(jsonTooDeep(JSON.stringify(['a"[[[', 'b\\', '\\"{{{', ['x']]), 2)).toBe(false);
    expect(jsonTooDeep(JSON.stringify(['a"[[[', 'b\\', '\\"{{{', [['x']]]), 2)).toBe(true);
    expect(jsonTooDeep(JSON.stringify({ [`k"[{\\`]: [[]] }), 3)).toBe(false);
    expect(jsonTooDeep(JSON.stringify({ [`k"[{\\`]: [[[]]] }), 3)).toBe(true);
  });

  it('100,000 and 500,000 levels: true, without recursion', () => {
    expect(jsonTooDeep(arrays(100_000), 64)).toBe(true);
    expect(jsonTooDeep(objects(500_000), 64)).toBe(true);
  });
});

describe('nestedDeeper (a value)', () => {
  it('exact at the bound; scalars are no level; 100,000 levels without recursion', () => {
    for (const [text, deeper] of [
      [arrays(64), false],
      [arrays(65), true],
      [objects(64), false],
      [objects(65), true],
      [`[1,{"b":${arrays(62)}},[]]`, false],
      [`[1,{"b":${arrays(63)}},[]]`, true],
    ] as const)
      expect(nestedDeeper(JSON.parse(text), 64)).toBe(deeper);
    expect(nestedDeeper('[[[', 0)).toBe(false);
    expect(nestedDeeper(null, 0)).toBe(false);
    expect(nestedDeeper([], 0)).toBe(true);
    expect(nestedDeeper(JSON.parse(arrays(100_000)), 64)).toBe(true);
  });
});
