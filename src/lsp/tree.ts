/**
 * Where a position is in a checked tree: the entries from the top level down to the key or value under it. Each level
 * looks at its own entries only (a step's keys, not the other steps'), and anchored values are found where the
 * anchor is written.
 */
import type { Position } from 'vscode-languageserver';
import type { YEntry, YNode } from '../flow/yaml.js';
import { contains, nodeRange } from './positions.js';

export interface Located {
  /** The entries from the top level down. */
  path: YEntry[];
  /** The position is on the last entry's key (else inside its value). */
  onKey: boolean;
}

export function locate(root: YNode, p: Position): Located {
  const path: YEntry[] = [];
  let node: YNode | undefined = root;
  while (node) {
    if (node.kind === 'seq') {
      node = node.items.find((i) => contains(nodeRange(i), p));
      continue;
    }
    if (node.kind !== 'map') break;
    const e: YEntry | undefined = node.entries.find(
      (x) => contains(nodeRange(x.keyNode), p) || contains(nodeRange(x.value), p),
    );
    if (!e) break;
    path.push(e);
    if (contains(nodeRange(e.keyNode), p)) return { path, onKey: true };
    node = e.value;
  }
  return { path, onKey: false };
}
