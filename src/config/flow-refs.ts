/** The flows a config file names in its routes, with their positions (for `validate` and editors). */
import type { Diagnostic } from '../errors/diagnostic.js';
import { didYouMean } from '../flow/check-context.js';
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

/**
 * UNKNOWN_ROUTE_FLOW for each flow a config file names that is not among `names` (the flows checked with it, or
 * its flows directory's: `fromDir`).
 */
export function unknownRouteFlows(
  file: string,
  refs: readonly FlowRef[],
  names: ReadonlySet<string>,
  fromDir: boolean,
) {
  const out: Diagnostic[] = [];
  for (const r of refs) {
    if (names.has(r.name)) continue;
    out.push({
      code: 'UNKNOWN_ROUTE_FLOW',
      severity: 'error',
      message:
        `${r.where} names flow "${r.name}", which is not among the flows ` +
        `checked${fromDir ? " (the config's flows directory)" : ''}: calls routed there would ` +
        `get 404 UNKNOWN_FLOW`,
      file,
      line: r.line,
      column: r.column,
      endLine: r.line,
      endColumn: r.endColumn,
      hint: didYouMean(r.name, names) ?? `Flows: ${[...names].sort().join(', ') || 'none'}.`,
    });
  }
  return out;
}
