/** The flows a config file names in its routes, with their positions (for `validate` and editors). */
import { entry, loadYaml, type YNode } from '../flow/yaml.js';

/** A flow a config file names (a route or a canary), with where it names it. */
export interface FlowRef {
  name: string;
  /** `routes.apps["APP1"]`, `routes.numbers["+33..."]`, `routes.default`, `canary`. */
  where: string;
  line: number;
  column: number;
  endColumn: number;
}

/** The flows a config file's routes name, with their positions (empty when it does not load). */
export function configFlowRefs(text: string, file: string): FlowRef[] {
  const root = loadYaml(String(text), file).root;
  if (!root || root.kind !== 'map') return [];
  const out: FlowRef[] = [];
  const add = (node: YNode, where: string) => {
    if (node.kind !== 'scalar' || typeof node.value !== 'string') return;
    out.push({
      name: node.value,
      where,
      line: node.pos.line,
      column: node.pos.col,
      endColumn: node.end.line === node.pos.line ? node.end.col : node.pos.col + node.value.length,
    });
  };
  const routes = entry(root, 'routes')?.value;
  if (routes?.kind === 'map') {
    for (const group of ['apps', 'numbers'] as const) {
      const m = entry(routes, group)?.value;
      if (m?.kind === 'map') for (const e of m.entries) add(e.value, `routes.${group}["${e.key}"]`);
    }
    const d = entry(routes, 'default');
    if (d) add(d.value, 'routes.default');
  }
  return out;
}
