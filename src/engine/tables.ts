/**
 * What the engine's guards and actions need of a flow, made once when it compiles:
 * per command step its command builder (params rendered and checked), per `say:` branch
 * its play builder, the compiled result patterns, the switch conditions and set steps.
 * Looked up by the step ids and indices the machine config names; no decision here.
 */
import type { ActionName } from '../flow/actions.js';
import type { Branch, FlowModel, Value } from '../flow/model.js';
import {
  commandBuilder,
  literalValue,
  playBuilder,
  promptTable,
  type CommandBuilder,
  type PromptTable,
} from './params.js';
import { flowExt, type FlowExt } from './v2-scope.js';
import { fillerBuilder, httpBuilder, secretsOf } from './http-params.js';
import { compileLinear, type LinearRegex } from '../flow/pattern.js';
import { sensitivityOf, type Sensitivity } from './mask.js';
import { buildSubflowTables, type SubflowTables } from './subflow.js';
import { handlersOf } from '../flow/model.js';
import { loopTable, type LoopTable } from './loop.js';
import { queueTable, type QueueTable } from './queue.js';
import { queueSays } from '../flow/machine-queue.js';

/** A builder never used (a queue step builds through its QueueTable; an absent say keeps its index). */
const NO_SAY: CommandBuilder = {
  constant: true,
  build() {
    throw new Error('no builder here');
  },
};

/** Matches nothing: stands for a pattern that does not compile. */
export const NEVER: LinearRegex = { test: () => false, size: 0 };

export type Literal = ReturnType<typeof literalValue>;
export type Assign = { name: string; kind: 'literal'; value: Literal } | { name: string; kind: 'expr'; expr: string };

export interface CommandTable {
  command: ActionName;
  builder: CommandBuilder;
  /** The builders of the step's `say:` branches, in the machine config's order. */
  says: CommandBuilder[];
  /** An http step's filler (visit n: the n-th entry). */
  filler?: ReturnType<typeof fillerBuilder>;
  /** An http step's secrets, read when it runs. */
  secrets?: ReturnType<typeof secretsOf>;
}

export interface FlowTables {
  /** A command step's builders, made on the step's first use (a big flow loads without building them all). */
  command(step: string): CommandTable | undefined;
  /** A queue step's builders (version 2), made on the step's first use. */
  queue(step: string): QueueTable | undefined;
  sets: Map<string, Assign[]>;
  /** The say of the error way of set steps (handlers.error's `say:`), by set step: what a failed set plays first. */
  setSays: Map<string, CommandBuilder[]>;
  /** Switch conditions (CEL) by step, in case order. */
  cases: Map<string, string[]>;
  /** `valid:` conditions (CEL) by command step. */
  valids: Map<string, string>;
  /** Result patterns by their anchored regex source. */
  regexes: Map<string, LinearRegex>;
  /**
   * The vars a call starts with: the flow's `vars:`; a module's (run on its own by a tool) with its params' defaults
   * after them, as a `subflow:` entering it starts it (src/engine/subflow.ts).
   */
  initialVars: Record<string, Value>;
  /** The flow's sensitive variables and the steps whose result is sensitive (src/engine/mask.ts); undefined: none. */
  sensitive: Sensitivity | undefined;
  /** Environment, calendars, language (version 2); absent for a flow without them. */
  ext?: FlowExt;
  /** Subflow call sites and returns (a flow that enters modules, or a module). */
  subflows?: SubflowTables;
  /** foreach steps (version 2). */
  loops: Map<string, LoopTable>;
}

function sayOf(b: Branch | undefined, out: CommandBuilder[], prompts: PromptTable | undefined): void {
  if (b?.say && b.say.length > 0) out.push(playBuilder(b.say, prompts));
}

/** A flow's vars, and a module's params' defaults over them (the required ones are given by whoever runs it). */
function startOf(model: FlowModel): Record<string, Value> {
  const params = model.module?.params;
  if (!params) return model.vars;
  const out: Record<string, Value> = { ...model.vars };
  for (const [k, p] of Object.entries(params)) if (!p.required) out[k] = p.value;
  return out;
}

export function buildTables(model: FlowModel): FlowTables {
  const commands = new Map<string, CommandTable>();
  const queues = new Map<string, QueueTable>();
  const prompts = model.prompts
    ? promptTable(model.prompts, model.language?.default ?? Object.keys(model.languages ?? {})[0] ?? '')
    : undefined;
  const t: FlowTables = {
    command(id) {
      let c = commands.get(id);
      if (c) return c;
      const step = model.steps[id];
      if (!step || step.kind !== 'command') return undefined;
      c = commandTable(model, step, prompts);
      commands.set(id, c);
      return c;
    },
    queue(id) {
      let q = queues.get(id);
      if (q) return q;
      const step = model.steps[id];
      if (!step || step.kind !== 'command' || !step.queue) return undefined;
      q = queueTable(step.queue, prompts);
      queues.set(id, q);
      return q;
    },
    sets: new Map(),
    setSays: new Map(),
    cases: new Map(),
    valids: new Map(),
    regexes: new Map(),
    loops: new Map(),
    initialVars: startOf(model),
    sensitive: sensitivityOf(model),
  };
  const ext = flowExt(model);
  if (ext) t.ext = ext;
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
        step.assign.map((a): Assign =>
          a.value.kind === 'expr'
            ? { name: a.name, kind: 'expr', expr: a.value.expr }
            : { name: a.name, kind: 'literal', value: literalValue(a.value.value) },
        ),
      );
      const says: CommandBuilder[] = [];
      sayOf(handlersOf(model, id).error, says, prompts);
      if (says.length > 0) t.setSays.set(id, says);
    } else if (step.kind === 'switch') {
      t.cases.set(
        id,
        step.cases.map((c) => c.when),
      );
    } else if (step.kind === 'loop') {
      t.loops.set(id, loopTable(step));
    } else if (step.kind === 'command') {
      if (step.valid) t.valids.set(id, step.valid.when);
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
 * The say builders in the order machine-config.ts numbers them: own keys (an http step's
 * ok after the others), patterns, inherited keys and patterns not overridden, default,
 * error, an http step's timeout, valid's else.
 */
function commandTable(
  model: FlowModel,
  step: Extract<FlowModel['steps'][string], { kind: 'command' }>,
  prompts: PromptTable | undefined,
): CommandTable {
  const says: CommandBuilder[] = [];
  if (step.queue) {
    // indexed as machine-queue.ts picks them: timeout, empty, error (an absent branch keeps its index)
    for (const b of queueSays(model, step)) says.push(b?.say ? playBuilder(b.say, prompts) : NO_SAY);
    return { command: 'queue', builder: NO_SAY, says };
  }
  const seen = new Set<string>();
  const add = (key: string, b: Branch) => {
    if (seen.has(key)) return;
    seen.add(key);
    sayOf(b, says, prompts);
  };
  // an http step's ok (any 2xx) comes after its exact status codes, its timeout after error
  const http = step.http !== undefined;
  for (const [k, b] of Object.entries(step.on.exact)) if (!http || (k !== 'ok' && k !== 'timeout')) add(k, b);
  if (http && step.on.exact.ok) add('ok', step.on.exact.ok);
  for (const p of step.on.patterns) add(p.source, p.branch);
  const handlers = handlersOf(model, step.id);
  const h = step.inheritHandlers ? handlers.on[step.command.name] : undefined;
  if (h) {
    for (const [k, b] of Object.entries(h.exact)) add(k, b);
    for (const p of h.patterns) add(p.source, p.branch);
  }
  if (step.command.name !== 'hangup') {
    sayOf(step.on.default, says, prompts);
    sayOf(step.on.error ?? handlers.error, says, prompts);
    if (http && step.on.exact.timeout) sayOf(step.on.exact.timeout, says, prompts);
    if (step.valid) sayOf(step.valid.else ?? step.on.default, says, prompts);
  }
  if (step.http) {
    const t: CommandTable = {
      command: 'http',
      builder: httpBuilder(step.http),
      says,
      secrets: secretsOf(model.secrets ?? []),
    };
    if (step.http.filler) t.filler = fillerBuilder(step.http.filler, prompts);
    return t;
  }
  return { command: step.command.name, builder: commandBuilder(step.command, prompts), says };
}
