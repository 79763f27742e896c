/**
 * Flows written as YAML, through the checker (src/flow/check.ts), when it is there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileFlow, type CompiledFlow } from '../../src/engine/compile.js';
import type { FlowModel } from '../../src/flow/model.js';

const root = new URL('../..', import.meta.url).pathname;

type CheckFlow = (
  text: string,
  file: string,
) => { model?: FlowModel; diagnostics: { severity: string; code: string; message: string; line: number }[] };

export async function checker(): Promise<CheckFlow | undefined> {
  if (!existsSync(join(root, 'src/flow/check.ts'))) return undefined;
  const mod = (await import('../../src/flow/' + 'check.js')) as { checkFlow?: CheckFlow };
  return mod.checkFlow;
}

/** Compiles YAML text through the checker; throws with the diagnostics when it has errors. */
export async function yamlFlow(text: string, file = 'test.yaml'): Promise<CompiledFlow> {
  const check = await checker();
  if (!check) throw new Error('src/flow/check.ts is not there yet');
  const { model, diagnostics } = check(text, file);
  if (!model) throw new Error(diagnostics.map((d) => `${d.line}: ${d.code} ${d.message}`).join('\n'));
  return compileFlow(model, text);
}

export async function exampleFlows(): Promise<CompiledFlow[]> {
  if (!(await checker())) return [];
  const dir = join(root, 'flows');
  const out: CompiledFlow[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.yaml') && !n.endsWith('.test.yaml'))
    .sort()) {
    out.push(await yamlFlow(readFileSync(join(dir, name), 'utf8'), `flows/${name}`));
  }
  return out;
}
