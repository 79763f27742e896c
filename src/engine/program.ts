/**
 * The runtime form of a flow, built once when it compiles: per step, a command builder,
 * the branch lookup (exact map, patterns compiled once, flow-wide handlers merged per
 * step, the error branch resolved) and the logic of set/switch steps. `advance` runs on
 * this; the xstate machine is the formal model of the same decisions.
 */
import type { ActionName } from '../flow/actions.js';
import type { Branch, FlowModel, ResultPattern, Step, Value } from '../flow/model.js';
import { commandBuilder, literalValue, playBuilder, type CommandBuilder, type GetScope } from './params.js';

/** The end of the flow as a target: the engine answers `hangup`. Step ids are never empty. */
export const END = '';

export interface PBranch {
  /** The key that fired: an exact result, a pattern's source, "default" or "error". */
  key: string;
  goto?: string;
  retry?: number;
  then?: string;
  /** A play inserted before the transition; its media list escalates with the key's count. */
  say?: CommandBuilder;
}

export interface PPattern {
  key: string;
  re: RegExp;
  branch: PBranch;
}

export interface PCommand {
  kind: 'command';
  id: string;
  /** A call command, or an effect (sms) that the engine suspends on. */
  command: ActionName;
  builder: CommandBuilder;
  save?: string;
  exact: Map<string, PBranch>;
  patterns: PPattern[];
  /** Flow-wide handlers.on[command], minus the keys the step has itself. Empty with `handlers: false`. */
  inheritedExact: Map<string, PBranch>;
  inheritedPatterns: PPattern[];
  default?: PBranch;
  /** The step's `error` branch, else the flow's handlers.error; none: hang up. */
  error?: PBranch;
  /** The hangup command: the flow is over once it is sent. */
  final: boolean;
}

export type PAssign =
  | { name: string; kind: 'literal'; value: ReturnType<typeof literalValue> }
  | { name: string; kind: 'expr'; expr: string };

export interface PSet {
  kind: 'set';
  id: string;
  assign: PAssign[];
  next: string;
}

export interface PSwitch {
  kind: 'switch';
  id: string;
  cases: { when: string; goto: string }[];
  default: string;
}

export type PStep = PCommand | PSet | PSwitch;

export interface Program {
  start: string;
  steps: Map<string, PStep>;
  /** Logic steps run on a terminal call_status. */
  hangupHandler?: string;
  initialVars: Record<string, Value>;
}

export type { CommandBuilder, GetScope };

function branch(key: string, b: Branch): PBranch {
  const out: PBranch = { key };
  if (b.retry !== undefined) {
    out.retry = b.retry;
    out.then = b.then ?? END;
  } else {
    out.goto = b.goto ?? END;
  }
  if (b.say && b.say.length > 0) out.say = playBuilder(b.say);
  return out;
}

function patterns(list: ResultPattern[], skip: ReadonlySet<string>): PPattern[] {
  const out: PPattern[] = [];
  for (const p of list) {
    if (skip.has(p.source)) continue;
    let re: RegExp;
    try {
      re = new RegExp(p.regex);
    } catch {
      continue; // the checker refuses bad patterns; never crash on one here
    }
    out.push({ key: p.source, re, branch: branch(p.source, p.branch) });
  }
  return out;
}

function commandStep(model: FlowModel, step: Extract<Step, { kind: 'command' }>): PCommand {
  const exact = new Map<string, PBranch>();
  for (const [k, b] of Object.entries(step.on.exact)) exact.set(k, branch(k, b));
  const own = patterns(step.on.patterns, new Set());
  const inheritedExact = new Map<string, PBranch>();
  let inheritedPatterns: PPattern[] = [];
  const h = step.inheritHandlers ? model.handlers.on[step.command.name] : undefined;
  if (h) {
    for (const [k, b] of Object.entries(h.exact)) if (!exact.has(k)) inheritedExact.set(k, branch(k, b));
    inheritedPatterns = patterns(h.patterns, new Set(step.on.patterns.map((p) => p.source)));
  }
  const errorBranch = step.on.error ?? model.handlers.error;
  const out: PCommand = {
    kind: 'command',
    id: step.id,
    command: step.command.name,
    builder: commandBuilder(step.command),
    exact,
    patterns: own,
    inheritedExact,
    inheritedPatterns,
    final: step.command.name === 'hangup',
  };
  if (step.save !== undefined) out.save = step.save;
  if (step.on.default) out.default = branch('default', step.on.default);
  if (errorBranch) out.error = branch('error', errorBranch);
  return out;
}

export function buildProgram(model: FlowModel): Program {
  const steps = new Map<string, PStep>();
  for (const [id, step] of Object.entries(model.steps)) {
    switch (step.kind) {
      case 'command':
        steps.set(id, commandStep(model, step));
        break;
      case 'set':
        steps.set(id, {
          kind: 'set',
          id,
          next: step.next ?? END,
          assign: step.assign.map((a): PAssign =>
            a.value.kind === 'expr'
              ? { name: a.name, kind: 'expr', expr: a.value.expr }
              : { name: a.name, kind: 'literal', value: literalValue(a.value.value) },
          ),
        });
        break;
      case 'switch':
        steps.set(id, {
          kind: 'switch',
          id,
          cases: step.cases.map((c) => ({ when: c.when, goto: c.goto })),
          default: step.default ?? END,
        });
        break;
    }
  }
  const program: Program = { start: model.start, steps, initialVars: model.vars };
  if (model.handlers.hangup !== undefined) program.hangupHandler = model.handlers.hangup;
  return program;
}

/** The branch a result takes at a command step: exact, patterns, inherited handlers, default. */
export function matchResult(step: PCommand, result: string): PBranch | undefined {
  const exact = step.exact.get(result);
  if (exact) return exact;
  for (const p of step.patterns) if (p.re.test(result)) return p.branch;
  const inherited = step.inheritedExact.get(result);
  if (inherited) return inherited;
  for (const p of step.inheritedPatterns) if (p.re.test(result)) return p.branch;
  return step.default;
}

/** The branch a key names at a command step (for tools that replay decisions by key). */
export function branchByKey(step: PCommand, key: string): PBranch | undefined {
  if (key === 'default') return step.default;
  if (key === 'error') return step.error;
  return (
    step.exact.get(key) ??
    step.patterns.find((p) => p.key === key)?.branch ??
    step.inheritedExact.get(key) ??
    step.inheritedPatterns.find((p) => p.key === key)?.branch
  );
}
