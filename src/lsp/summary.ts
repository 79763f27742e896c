/**
 * A step in a few lines, for hovers: what it sends (its action and first params, as written) and where it goes (each
 * branch, in the order written), and what it saves. Read from the checked tree; long values are clipped.
 */
import { ACTIONS } from '../flow/check-steps.js';
import { clip, entry, type YMap, type YNode } from '../flow/yaml.js';
import { STEP_KEY_TARGETS } from './vocabulary.js';

/** How many params, keys or items of a value a summary shows. */
const SHOWN = 4;

/** A value as it reads in one line: scalars as written (texts quoted and clipped), maps and lists shortened. */
export function short(n: YNode): string {
  if (n.kind === 'scalar') {
    if (n.type === 'null') return 'null';
    return n.type === 'string' && (n.quoted || /[\s:#{}[\],]/.test(String(n.value)))
      ? JSON.stringify(clip(String(n.value)))
      : clip(n.source);
  }
  const more = (len: number) => (len > SHOWN ? ', …' : '');
  if (n.kind === 'seq') return `[${n.items.slice(0, SHOWN).map(short).join(', ')}${more(n.items.length)}]`;
  const inner = n.entries.slice(0, SHOWN).map((e) => `${e.key}: ${short(e.value)}`);
  return `{ ${inner.join(', ')}${more(n.entries.length)} }`;
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** A condition as written (no quotes around it), clipped. */
const condition = (n: YNode) => (n.kind === 'scalar' ? clip(String(n.value), 60) : short(n));

/** Where a branch leads: a step id, `{ goto }`, or `{ retry, then }`. */
function target(b: YNode): string {
  if (b.kind === 'scalar') return code(String(b.value));
  if (b.kind !== 'map') return short(b);
  const goto = entry(b, 'goto')?.value;
  if (goto) return code(short(goto));
  const retry = entry(b, 'retry')?.value;
  const then = entry(b, 'then')?.value;
  return retry && then ? `retry ${short(retry)}, then ${code(short(then))}` : short(b);
}

/** What a step's action does, in one line. */
function sends(action: string, v: YNode): string {
  if (v.kind === 'scalar' && v.type === 'null') return code(action);
  if (v.kind === 'map' && action !== 'say') {
    const params = v.entries.slice(0, SHOWN).map((e) => `${e.key}: ${short(e.value)}`);
    return `${code(action)} ${params.join(', ')}${v.entries.length > SHOWN ? ', …' : ''}`;
  }
  if (action === 'switch') return code(action);
  if (action === 'when' || action === 'valid') return `${code(action)} ${code(condition(v))}`;
  return `${code(action)} ${short(v)}`;
}

/** The branches of a step, one line each, in the order written. */
function branches(step: YMap): string[] {
  const out: string[] = [];
  for (const e of step.entries) {
    if (e.key === 'on' && e.value.kind === 'map')
      for (const b of e.value.entries) out.push(`- ${code(b.key)} → ${target(b.value)}`);
    else if (e.key === 'switch' && e.value.kind === 'seq')
      for (const c of e.value.items) {
        if (c.kind !== 'map') continue;
        const when = entry(c, 'when')?.value;
        const goto = entry(c, 'goto')?.value;
        if (when && goto) out.push(`- when ${code(condition(when))} → ${target(goto)}`);
      }
    else if (STEP_KEY_TARGETS.includes(e.key)) out.push(`- ${e.key} → ${target(e.value)}`);
    else if (e.key === 'valid' && e.value.kind === 'map') {
      const otherwise = entry(e.value, 'else')?.value;
      if (otherwise) out.push(`- invalid → ${target(otherwise)}`);
    }
  }
  return out;
}

/** What a step saves: `save: name`, or a subflow's `save: { variable: value }`. */
function saves(step: YMap): string | undefined {
  const s = entry(step, 'save')?.value;
  if (s?.kind === 'scalar' && typeof s.value === 'string') return `saves ${code(`vars.${s.value}`)}`;
  if (s?.kind === 'map') return `saves ${s.entries.map((e) => code(`vars.${e.key}`)).join(', ')}`;
  return undefined;
}

/** A step's summary, in markdown: a title line (with the line of its id), its branches, what it saves. */
export function stepSummary(id: string, step: YNode, line: number): string {
  const title = `**step ${code(id)}** (line ${line})`;
  if (step.kind !== 'map') return `${title}: ${short(step)}`;
  const action = step.entries.find((e) => ACTIONS.includes(e.key));
  const lines = [action ? `${title}: ${sends(action.key, action.value)}` : `${title}: no action`];
  const ways = branches(step);
  if (ways.length > 0) lines.push('', ...ways);
  const saved = saves(step);
  if (saved) lines.push('', saved);
  return lines.join('\n');
}
