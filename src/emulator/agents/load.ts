/**
 * Loads an agents file (`callscript emulator --agents agents.yaml`): a YAML (or JSON) map of E.164 numbers to
 * agents, checked like a caller script, every problem with its file:line:col (docs/emulator.md "Agents"):
 *
 *   "+447700900001": { answer_after: 3, talk: 60 }
 *   "+447700900002": { answer: false }
 *   "+447700900003":                      # the defaults: answers after 3 s, talks 60 s
 *
 * A number written without quotes (YAML reads `+447700900001` as an integer) is taken as written. The same bounds as
 * caller scripts: 2 MiB, 64 levels of nesting, 100,000 values once aliases are expanded.
 */
import { isAlias, isMap, isScalar, type Document, type Node } from 'yaml';
import { checkE164 } from '../../protocol/formats.js';
import { expandedTooBig, linePos, MAX_SCRIPT_BYTES, yamlTooDeep } from '../caller/depth.js';
import { Source, type ScriptError } from '../caller/source.js';
import { MAX_DEPTH } from '../json-depth.js';
import { AGENT_LIMITS, checkAgent, type AgentBehaviour } from './behaviour.js';

export type AgentsLoad = { ok: true; agents: Map<string, AgentBehaviour> } | { ok: false; errors: ScriptError[] };

/** Problems reported at most: a file of 10,000 bad agents says the first ones, and that there are more. */
export const MAX_AGENT_ERRORS = 100;

const EXAMPLE = '"+447700900001": { answer_after: 3, talk: 60 }';
const fmt = (n: number) => n.toLocaleString('en-US');

export function loadAgentsFile(text: string, file: string): AgentsLoad {
  const one = (offset: number, message: string): AgentsLoad => ({
    ok: false,
    errors: [{ file, ...linePos(text, offset), path: '', message }],
  });
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SCRIPT_BYTES)
    return one(
      0,
      `the file is ${fmt(bytes)} bytes; an agents file is at most ${fmt(MAX_SCRIPT_BYTES)} bytes (2 MiB), ` +
        'as a caller script',
    );
  const deep = yamlTooDeep(text);
  if (deep !== undefined) return one(deep, `values are nested deeper than ${MAX_DEPTH} levels`);
  const src = new Source(text, file, { uniqueKeys: false });
  const syntax = src.syntaxErrors();
  if (syntax.length > 0) return { ok: false, errors: syntax.slice(0, MAX_AGENT_ERRORS) };
  const big = expandedTooBig(src.doc);
  if (big) return one(big.offset, big.message.replace('the script', 'the file'));
  return new AgentsCheck(src).run();
}

class AgentsCheck {
  private readonly errors: ScriptError[] = [];
  private readonly agents = new Map<string, AgentBehaviour>();
  /** number -> the line it is first written on. */
  private readonly lines = new Map<string, number>();

  constructor(private readonly src: Source) {}

  run(): AgentsLoad {
    const root = this.src.doc.contents as Node | null;
    if (root === null || (isScalar(root) && root.value === null)) return { ok: true, agents: this.agents };
    if (!isMap(root)) {
      this.err(root, '', `the agents file is a map of E.164 numbers to agents, e.g. ${EXAMPLE}`);
      return this.result();
    }
    for (const pair of root.items) {
      if (this.errors.length >= MAX_AGENT_ERRORS) {
        this.err(pair.key as Node, '', `more problems follow: the first ${MAX_AGENT_ERRORS} are shown`);
        break;
      }
      const keyNode = pair.key as Node | null;
      const number = this.keyText(keyNode);
      if (number === '$schema') {
        if (!isScalar(pair.value) || typeof pair.value.value !== 'string')
          this.err(pair.value as Node, '$schema', '$schema is the URL or path of the JSON Schema (a string)');
        continue;
      }
      if (this.lines.size >= AGENT_LIMITS.maxAgents) {
        this.err(keyNode, number, `more than ${fmt(AGENT_LIMITS.maxAgents)} agents: the emulator keeps at most that`);
        break;
      }
      const bad = checkE164(number);
      if (bad) {
        const plus = /^[1-9][0-9]+$/.test(number) && !checkE164(`+${number}`);
        const why = plus ? `it has no + (did you mean "+${number}"?)` : bad;
        this.err(keyNode, number, `${JSON.stringify(number)} is not an E.164 number: ${why}`);
        continue;
      }
      const line = this.pos(keyNode).line;
      const first = this.lines.get(number);
      if (first !== undefined) {
        this.err(keyNode, number, `${number} is listed twice (first on line ${first})`);
        continue;
      }
      this.lines.set(number, line);
      this.agent(number, this.resolve(pair.value as Node | null));
    }
    return this.result();
  }

  private agent(number: string, node: Node | null | undefined): void {
    const fields = new Map<string, unknown>();
    const where = new Map<string, { key: Node | null; value: Node | null }>();
    if (isMap(node)) {
      for (const p of node.items) {
        const k = this.keyText(p.key as Node | null);
        if (fields.has(k)) {
          this.err(p.key as Node | null, `${number}.${k}`, `${k} is written twice in agent ${number}`);
          continue;
        }
        const v = this.resolve(p.value as Node | null);
        fields.set(k, isScalar(v) ? v.value : v ? v.toJSON() : null);
        where.set(k, { key: p.key as Node | null, value: v ?? null });
      }
    } else if (node && !(isScalar(node) && node.value === null)) {
      this.err(
        node,
        number,
        `agent ${number} is a map: { answer_after, talk } or { answer: false } (nothing for the defaults)`,
      );
      return;
    }
    const c = checkAgent(number, fields);
    if (c.ok) {
      this.agents.set(number, c.behaviour);
      return;
    }
    const found = c.problems.map((p) => {
      const w = p.key === undefined ? undefined : where.get(p.key);
      const at = w ? (p.onKey ? w.key : (w.value ?? w.key)) : node;
      return { offset: at?.range?.[0] ?? 0, path: p.key === undefined ? number : `${number}.${p.key}`, p };
    });
    // in the order they are written
    for (const f of found.sort((a, b) => a.offset - b.offset))
      this.errors.push({ file: this.src.file, ...this.src.at(f.offset), path: f.path, message: f.p.message });
  }

  /** A key as written: `+447700900001` unquoted is a YAML integer, taken as its text. */
  private keyText(n: Node | null): string {
    if (!isScalar(n)) return '';
    if (typeof n.value === 'number' && n.range) return this.src.text.slice(n.range[0], n.range[1]).trim();
    return String(n.value);
  }

  private resolve(n: Node | null | undefined): Node | null | undefined {
    return isAlias(n) ? (n.resolve(this.src.doc as Document) as Node | undefined) : n;
  }

  private pos(n: Node | null | undefined): { line: number; column: number } {
    return this.src.at(n?.range?.[0] ?? 0);
  }

  private err(n: Node | null | undefined, path: string, message: string): void {
    this.errors.push({ file: this.src.file, ...this.pos(n), path, message });
  }

  private result(): AgentsLoad {
    return this.errors.length > 0 ? { ok: false, errors: this.errors } : { ok: true, agents: this.agents };
  }
}
