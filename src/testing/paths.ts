/**
 * `callscript paths`: one scenario case per transition of a flow not yet covered
 * (transitions.ts, the definition coverage uses), each the shortest call found that takes
 * it (explore.ts: real calls stepped on the flow's machine), named after it, written in the
 * scenario format of docs/testing.md. Every case is checked as `callscript test` checks it
 * (a module's `with:` included) and run by the scenario runner before it is kept: it
 * passes and takes its transition. A transition no case can take is left out, with the
 * reason (why.ts). A module's cases give its params (`with:`) and end with its return.
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { CoverageFile } from './coverage.js';
import { Coverage } from './coverage.js';
import { explore, ERROR_CODE, type Found, type Hop } from './explore.js';
import { lookupKey, type QueueBranch } from './branch-executor.js';
import { smsHash } from './executors.js';
import { runCase } from './runner.js';
import { DEFAULT_CALL, parseScenario, ScenarioFileError, type Plain, type Scenario } from './scenario.js';
import { checkWith } from './module-params.js';
import type { Value } from '../flow/model.js';
import { flowValues, startVariants } from './starts.js';
import { flowTransitions } from './transitions.js';
import { impossible, notFound } from './why.js';
import { printable } from '../terminal/printable.js';

export interface GeneratedCase {
  /** The transition the case takes (its name). */
  transition: string;
  found: Found;
  /** The case as YAML lines (indented for `cases:`). */
  lines: string[];
}

export interface Skipped {
  transition: string;
  why: string;
}

export interface Generated {
  cases: GeneratedCase[];
  skipped: Skipped[];
  /** Set (the limit, in ms) when the search stopped at its time limit. */
  outOfTime?: number;
}

/** The transitions of `flow` with no count in the coverage data, in flow order. */
export function uncovered(flow: CompiledFlow, coverage: CoverageFile | undefined): string[] {
  const taken = coverage?.flows?.[flow.name]?.transitions ?? {};
  return flowTransitions(flow).all.filter((k) => !((taken[k] ?? 0) > 0));
}

const q = (s: string) => JSON.stringify(s);
const inline = (v: Plain): string => JSON.stringify(v);

interface Step {
  expect: string;
  input?: Hop['input'];
  /** A queue operation's answer, as its step writes it. */
  answer?: string;
  comments: string[];
}

/** A queue operation's answer along the path, as its step's `answer:` (scenario-queues.ts). */
function queueAnswer(a: QueueBranch): string {
  if (a.error !== undefined) return `{ error: ${a.error} }`;
  return a.agent !== undefined ? `{ result: ${a.result}, agent: ${q(a.agent)} }` : `{ result: ${a.result} }`;
}

/** Whether `transition` is a key of the step that sent the command a request reports on (or a flow-wide handler's). */
const ownKey = (transition: string, from: string | undefined) =>
  from === undefined || transition.startsWith(`${from}:`) || transition.startsWith('handlers');

/** The case's steps: one per command answered and per sms effect met before the next command. */
function stepsOf(hops: Hop[], transition: string): Step[] {
  const steps: Step[] = [];
  hops.forEach((hop, i) => {
    const claim = i === hops.length - 1;
    if (hop.command !== undefined) {
      // The request reports on the command of the step before.
      const prev = steps[steps.length - 1]!;
      if (hop.input) prev.input = hop.input;
      if (claim)
        prev.comments.push(
          !hop.input
            ? `takes ${transition} (the call ends: the hangup handler runs)`
            : ownKey(transition, hop.from)
              ? `takes ${transition}`
              : // a later step of the same request takes it (a lookup, a switch): not this command's result
                `takes ${transition}, in the request that reports this ${hop.command}`,
        );
      // The call is over: what follows runs unchecked (sms effects take their mocks).
      if (!hop.input || 'status' in hop.input) return;
    }
    const first = steps.length;
    // a queue operation is a step with its answer (the path's, not a line's)
    for (const e of hop.effects)
      steps.push(
        e.kind === 'queue'
          ? { expect: e.kind, answer: queueAnswer(e.answer), comments: [] }
          : { expect: e.kind, comments: [] },
      );
    // a module run on its own ends with its return, as a hand-written module scenario does
    if (hop.ret !== undefined) steps.push({ expect: `{ return: ${q(hop.ret)} }`, comments: [] });
    else if (hop.reply) steps.push({ expect: hop.reply, comments: [] });
    if (claim && hop.command === undefined) steps[first]?.comments.push(`takes ${transition} (as the call starts)`);
  });
  return steps;
}

/** The mocked sms outcomes: up to the last failure (past the list, each succeeds as the runner's default). */
function smsMocks(hops: Hop[]): string[] {
  const all = hops.flatMap((h) => h.effects.flatMap((e) => (e.kind === 'sms' ? [e.ok] : [])));
  const upTo = all.lastIndexOf(false) + 1;
  return all.slice(0, upTo).map((ok, i) => (ok ? `{ hash: ${q(smsHash(i + 1))} }` : `{ error: ${q(ERROR_CODE)} }`));
}

/** The mocked lookups: the answer each method and URL got along the path (one each: a path keeps them). */
function httpMocks(hops: Hop[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of hops)
    for (const e of h.effects) {
      if (e.kind !== 'http' || seen.has(lookupKey(e.method, e.url))) continue;
      seen.add(lookupKey(e.method, e.url));
      const a = e.answer;
      const body = a.body !== undefined && a.body !== null ? `, body: ${JSON.stringify(a.body)}` : '';
      const answer = a.error !== undefined ? `error: ${a.error}` : `status: ${a.status ?? 200}${body}`;
      out.push(`{ method: ${e.method}, url: ${q(e.url)}, ${answer} }`);
    }
  return out;
}

function caseLines(transition: string, f: Found, params: Record<string, Value> | undefined): string[] {
  const lines = [`  - name: ${q(transition)}`];
  const given = Object.entries(params ?? {});
  if (given.length > 0) lines.push(`    with: { ${given.map(([k, v]) => `${k}: ${inline(v as Plain)}`).join(', ')} }`);
  const call = Object.entries(f.start.call).filter(
    ([k, v]) => v !== (DEFAULT_CALL as unknown as Record<string, unknown>)[k],
  );
  if (call.length > 0) lines.push(`    call: { ${call.map(([k, v]) => `${k}: ${inline(v as Plain)}`).join(', ')} }`);
  const vars = Object.entries(f.start.vars);
  if (vars.length > 0) lines.push(`    vars: { ${vars.map(([k, v]) => `${k}: ${inline(v)}`).join(', ')} }`);
  const sms = smsMocks(f.hops);
  const http = httpMocks(f.hops);
  if (sms.length > 0 || http.length > 0) lines.push('    mocks:');
  if (sms.length > 0) lines.push(`      sms: [${sms.join(', ')}]`);
  if (http.length > 0) lines.push('      http:', ...http.map((m) => `        - ${m}`));
  const steps = stepsOf(f.hops, transition);
  // a call never answered (call: { status: NOANSWER }) has no command to step through
  if (steps.length === 0) lines.push(`    # takes ${transition} (a call never answered: only the hangup handler runs)`);
  lines.push(steps.length === 0 ? '    steps: []' : '    steps:');
  for (const s of steps) {
    for (const c of s.comments) lines.push(`      # ${c}`);
    lines.push(`      - expect: ${s.expect}`);
    if (s.answer !== undefined) lines.push(`        answer: ${s.answer}`);
    const i: { status?: string; result?: string; error?: string } | undefined = s.input;
    if (i?.result !== undefined) lines.push(`        result: ${q(i.result)}`);
    if (i?.error !== undefined) lines.push(`        error: ${q(i.error)}`);
    if (i?.status !== undefined) lines.push(`        status: ${i.status}`);
  }
  return lines;
}

/** Runs the case as the scenario runner does: undefined when it passes and takes `transition`, else what went wrong. */
function check(flow: CompiledFlow, transition: string, lines: string[]): string | undefined {
  let s: Scenario;
  try {
    s = parseScenario(['flow: x', 'cases:', ...lines].join('\n'), 'generated.test.yaml');
  } catch (err) {
    if (!(err instanceof ScenarioFileError)) throw err;
    return `the case found is no valid scenario: ${err.errors[0]?.message ?? err.message}`;
  }
  // what `callscript test` checks of the file before it runs it (a module's with: params)
  const refused = checkWith(s, flow)[0];
  if (refused) return `the case found is refused: ${refused.message}`;
  const cov = new Coverage();
  const r = runCase(flow, s.cases[0]!, { hooks: cov.hooksFor(flow) });
  if (!r.ok) return `the case found does not pass: ${r.failure?.message}`;
  return (cov.data.flows[flow.name]?.transitions[transition] ?? 0) > 0 ? undefined : 'the case found does not take it';
}

export interface GenerateOptions {
  /** Call states the search walks at most (default 20000). */
  maxStates?: number;
  /** Milliseconds the search may take (default 60,000). */
  maxMs?: number;
  /** The clock the time limit is read on (tests). */
  now?: () => number;
  /** A module's params (`with:` of every case): those given, and a sample of each required one not given. */
  params?: Record<string, Value>;
}

/** One case per transition of `only` (default: every transition), or the reason there is none. */
export function generateCases(flow: CompiledFlow, only?: Iterable<string>, opts: GenerateOptions = {}): Generated {
  const want = only ? [...new Set(only)] : flowTransitions(flow).all;
  const cannot = impossible(flow, want);
  const values = flowValues(flow);
  const ex = explore(
    flow,
    want.filter((k) => !cannot.has(k)),
    startVariants(flow, values),
    values,
    opts,
  );
  const params = opts.params && Object.keys(opts.params).length > 0 ? opts.params : undefined;
  const cases: GeneratedCase[] = [];
  const skipped: Skipped[] = [];
  for (const k of want) {
    const f = ex.found.get(k);
    if (!f) {
      skipped.push({ transition: k, why: cannot.get(k) ?? notFound(flow, k, ex) });
      continue;
    }
    const lines = caseLines(k, f, params);
    const bad = check(flow, k, lines);
    if (bad) skipped.push({ transition: k, why: bad });
    else cases.push({ transition: k, found: f, lines });
  }
  return { cases, skipped, ...(ex.outOfTime !== undefined ? { outOfTime: ex.outOfTime } : {}) };
}

export interface YamlOptions {
  /** The flow as the file names it (default: its name). */
  flowRef?: string;
  /** The `$schema` reference of the first line (see schema-ref.ts); undefined: no such line. */
  schema?: string;
  /** A module's required params that were sampled (not given with --with), said in the header. */
  sampled?: readonly string[];
}

/** The scenario file (docs/testing.md) for the cases, the transitions left out listed in comments. */
export function scenarioYaml(flow: CompiledFlow, g: Generated, opts: YamlOptions = {}): string {
  const flowRef = opts.flowRef ?? flow.name;
  const lines: string[] = [];
  if (opts.schema !== undefined) lines.push(`# yaml-language-server: $schema=${opts.schema}`);
  lines.push(
    `# Generated by \`callscript paths ${flowRef}\`: one case per transition not yet covered, each the`,
    '# shortest call found that takes it (checked and run as `callscript test` runs it before it was written).',
  );
  if (opts.sampled && opts.sampled.length > 0)
    lines.push(
      `# The module's required param${opts.sampled.length > 1 ? 's' : ''} ${opts.sampled.join(', ')} ` +
        `${opts.sampled.length > 1 ? 'are' : 'is'} sampled in with: (give ${opts.sampled.length > 1 ? 'them' : 'it'} ` +
        `with --with ${opts.sampled[0]}=...).`,
    );
  if (g.skipped.length > 0) {
    lines.push('#', '# No case for these transitions:');
    for (const s of g.skipped) lines.push(`#   ${s.transition}: ${s.why}`);
  }
  lines.push(`flow: ${q(flowRef)}`);
  if (g.cases.length === 0) {
    lines.push(
      `cases: []  ` +
        `# ${g.skipped.length === 0 ? 'every transition is covered' : 'no transition left that a case can take'}`,
    );
    return yamlText(lines);
  }
  lines.push('cases:');
  for (const c of g.cases) lines.push(...c.lines);
  return yamlText(lines);
}

/**
 * The file's lines, each with its control characters escaped (src/terminal/printable.ts): the file is printed on a
 * terminal and read in reviews. Inside the quoted strings (JSON text, whose C0 characters are escaped already) an
 * escape is YAML's own (`\x9b`, `\u202e`): the value is the same; in a comment it shows what was there.
 */
function yamlText(lines: string[]): string {
  return lines.map(printable).join('\n') + '\n';
}
