/**
 * Nesting limits of a caller script, checked without recursion: the YAML composer and
 * `toJS` recurse once per level, and a few thousand levels (`- - - - ... x`, 10 KB) take
 * the process down (a V8 fatal error, not an exception). The text's concrete syntax tree,
 * which yaml's Parser builds without recursion, is measured before composing; the
 * composed document, with its aliases expanded, before `toJS`.
 */
import { isAlias, isCollection, isPair, Parser, type Document } from 'yaml';
import type { CST } from 'yaml';
import { MAX_DEPTH } from '../json-depth.js';

/**
 * The largest caller script, in bytes: the control API takes one in a request body of at most 2 MiB (server.ts).
 * An agents file (agents/load.ts) has the same bound.
 */
export const MAX_SCRIPT_BYTES = 2 * 1024 * 1024;

/** Nodes visited at most when aliases are expanded (a script is a few hundred). */
export const MAX_EXPANDED_NODES = 100_000;

/** The offset of the first collection nested deeper than `max` in `text`, if any. */
export function yamlTooDeep(text: string, max = MAX_DEPTH): number | undefined {
  const stack: [CST.Token, number][] = [];
  for (const token of new Parser().parse(text)) stack.push([token, 0]);
  while (stack.length > 0) {
    const [t, depth] = stack.pop()!;
    if (t.type === 'document') {
      if (t.value) stack.push([t.value, depth]);
    } else if (t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection') {
      if (depth + 1 > max) return t.offset;
      for (const item of t.items) {
        if ('key' in item && item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Why the document, aliases expanded, is too big to convert: too deep or too many nodes. */
export function expandedTooBig(doc: Document, max = MAX_DEPTH): { offset: number; message: string } | undefined {
  const stack: [unknown, number][] = [[doc.contents, 0]];
  let visits = 0;
  while (stack.length > 0) {
    const [n, depth] = stack.pop()!;
    if (++visits > MAX_EXPANDED_NODES)
      return {
        offset: 0,
        message:
          `the script is too big once its aliases are expanded ` +
          `(over ${MAX_EXPANDED_NODES.toLocaleString('en-US')} values)`,
      };
    if (isAlias(n)) {
      const target = n.resolve(doc);
      if (target) stack.push([target, depth]);
    } else if (isCollection(n)) {
      if (depth + 1 > max)
        return {
          offset: n.range?.[0] ?? 0,
          message: `values are nested deeper than ${max} levels once aliases are expanded`,
        };
      for (const item of n.items) {
        if (isPair(item)) stack.push([item.key, depth + 1], [item.value, depth + 1]);
        else stack.push([item, depth + 1]);
      }
    }
  }
  return undefined;
}

/** 1-based line and column of `offset` in `text`. */
export function linePos(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}
