/**
 * What the engine's guards and actions need of a flow, made once when it compiles:
 * per command step its command builder (params rendered and checked), per `say:` branch
 * its play builder, the compiled result patterns, the switch conditions and set steps.
 * Looked up by the step ids and indices the machine config names; no decision here.
 */
import type { ActionName } from '../flow/actions.js';
import type { Branch, FlowModel, Value } from '../flow/model.js';
import { commandBuilder, literalValue, playBuilder, type CommandBuilder } from './params.js';
import { compileLinear, type LinearRegex } from '../flow/pattern.js';
import { buildSubflowTables, type SubflowTables } from './subflow.js';
import { handlersOf } from '../flow/model.js';

/** Matches nothing: stands for a pattern that does not compile. */
export const NEVER: LinearRegex = { test: () => false, size: 0 };

export type Literal = ReturnType<typeof literalValue>;
export type Assign = { name: string; kind: 'literal'; value: Literal } | { name: string; kind: 'expr'; expr: string };

export interface CommandTable {
  command: ActionName;
  builder: CommandBuilder;
  /** The builders of the step's `say:` branches, in the machine config's order. */
  says: CommandBuilder[];
}

export interface FlowTables {
  /** A command step's builders, made on the step's first use (a big flow loads without building them all). */
  command(step: string): CommandTable | undefined;
  sets: Map<string, Assign[]>;
  /** Switch conditions (CEL) by step, in case order. */
  cases: Map<string, string[]>;
  /** Result patterns by their anchored regex source. */
  regexes: Map<string, LinearRegex>;
  initialVars: Record<string, Value>;
  /** Subflow call sites and returns (a flow that enters modules, or a module). */
  subflows?: SubflowTables;
}

function sayOf(b: Branch | undefined, out: CommandBuilder[]): void {
  if (b?.say && b.say.length > 0) out.push(playBuilder(b.say));
}

export function buildTables(model: FlowModel): FlowTables {
  const commands = new Map<string, CommandTable>();
  const t: FlowTables = {
    command(id) {
      let c = commands.get(id);
      if (c) return c;
      const step = model.steps[id];
      if (!step || step.kind !== 'command') return undefined;
      c = commandTable(model, step);
      commands.set(id, c);
      return c;
    },
    sets: new Map(),
    cases: new Map(),
    regexes: new Map(),
    initialVars: model.vars,
  };
  const regex = (source: string) => {
    if (t.regexes.has(source)) return;
    try {
      t.regexes.set(source, compileLinear(source));
    } catch {
      t.regexes.set(source, NEVER); // the checker refuses bad patterns; never crash on one here
    }
  };
  for (const [id, step] of Object.entries(model.steps)) {
    if (step.kind === 'set') {
      t.sets.set(
        id,
        step.assign.map((a): Assign => (a.value.kind === 'expr' ? { name: a.name, kind: 'expr', expr: a.value.expr } : { name: a.name, kind: 'literal', value: literalValue(a.value.value) })),
      );
    } else if (step.kind === 'switch') {
      t.cases.set(id, step.cases.map((c) => c.when));
    } else if (step.kind === 'command') {
      for (const p of step.on.patterns) regex(p.regex);
      const h = step.inheritHandlers ? handlersOf(model, id).on[step.command.name] : undefined;
      for (const p of h?.patterns ?? []) regex(p.regex);
    }
  }
  const sub = buildSubflowTables(model);
  if (sub) t.subflows = sub;
  return t;
}

/**
 * The say builders in the order machine-config.ts numbers them: own keys, patterns,
 * inherited keys and patterns not overridden, default, error.
 */
function commandTable(model: FlowModel, step: Extract<FlowModel['steps'][string], { kind: 'command' }>): CommandTable {
  const says: CommandBuilder[] = [];
  const seen = new Set<string>();
  const add = (key: string, b: Branch) => {
    if (seen.has(key)) return;
    seen.add(key);
    sayOf(b, says);
  };
  for (const [k, b] of Object.entries(step.on.exact)) add(k, b);
  for (const p of step.on.patterns) add(p.source, p.branch);
  const handlers = handlersOf(model, step.id);
  const h = step.inheritHandlers ? handlers.on[step.command.name] : undefined;
  if (h) {
    for (const [k, b] of Object.entries(h.exact)) add(k, b);
    for (const p of h.patterns) add(p.source, p.branch);
  }
  if (step.command.name !== 'hangup') {
    sayOf(step.on.default, says);
    sayOf(step.on.error ?? handlers.error, says);
  }
  return { command: step.command.name, builder: commandBuilder(step.command), says };
}
