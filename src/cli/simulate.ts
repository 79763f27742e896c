/**
 * `callscript simulate <flow>`: an interactive call in the terminal (docs/simulate.md).
 * The person on the line is the user (line by line through node:readline: a plain
 * terminal, tmux, or piped stdin) or a caller script (--caller). The call itself is
 * src/testing/simulate.ts.
 */
import { basename } from 'node:path';
import { languageVar, startVars } from '../engine/outbound.js';
import { readToolFile } from '../testing/tool-file.js';
import { missingParams, withParams } from '../testing/module-params.js';
import type { Value } from '../flow/model.js';
import { parseRoutes } from '../testing/mock-http.js';
import type { HttpMock } from '../testing/http-mocks.js';
import { parseClock } from '../testing/clock.js';
import { createInterface } from 'node:readline';
import type { CompiledFlow } from '../engine/compile.js';
import { envOf, flowsDirOf, loadFlow } from '../testing/flow-dir.js';
import { loadCallerScript } from '../emulator/caller/load.js';
import { printable, printableLines } from '../terminal/printable.js';
import {
  parseLine,
  promptText,
  render,
  ScriptedCaller,
  SimSession,
  varsText,
  type SimEvent,
  type SimOptions,
} from '../testing/simulate.js';

export interface SimulateFlags {
  flows?: string;
  caller?: string;
  from?: string;
  to?: string;
  /** The environment of version 2 flows (CALLSCRIPT_ENV). */
  env?: string;
  /** name=value, each an outbound call's start var (repeatable). */
  vars?: string[];
  /** The call's clock at its first request: ISO 8601 with a zone, or epoch ms. */
  now?: string;
  /** A routes file (the format of `callscript mock-http`) answering the flow's http lookups. */
  mocks?: string;
  /** name=value, each a param of a module run on its own (repeatable). */
  with?: string[];
}

export interface SimulateIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream;
}

/** Lines of the input, one at a time; null at the end of the input. */
function lineReader(io: SimulateIo, tty: boolean) {
  const rl = tty
    ? createInterface({ input: io.input, output: io.output, terminal: true })
    : createInterface({ input: io.input, terminal: false });
  const queue: string[] = [];
  const waiting: ((l: string | null) => void)[] = [];
  let closed = false;
  rl.on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  });
  // Ctrl-C at a prompt: the caller hangs up (the path is still printed).
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => {
    closed = true;
    for (const w of waiting.splice(0)) w(null);
  });
  return {
    next(prompt: string): Promise<string | null> {
      if (tty) {
        rl.setPrompt(prompt);
        rl.prompt();
      }
      if (queue.length > 0) return Promise.resolve(queue.shift()!);
      if (closed) return Promise.resolve(null);
      return new Promise((res) => waiting.push(res));
    },
    close: () => rl.close(),
  };
}

export async function simulate(
  ref: string,
  flags: SimulateFlags,
  io: SimulateIo = { input: process.stdin, output: process.stdout, err: process.stderr },
): Promise<number> {
  let flow: CompiledFlow;
  let caller: ScriptedCaller | undefined;
  let setup: Pick<SimOptions, 'now' | 'vars' | 'params' | 'routes' | 'routesName'>;
  try {
    const now = flags.now !== undefined ? parseClock(flags.now, '--now') : undefined;
    flow = await loadFlow(ref, flowsDirOf(flags.flows), envOf(flags.env));
    const params = withParams(flow, flags.with ?? []);
    // a module run on its own: its required params, up front (not a RUNTIME_PARAM once a step renders one)
    const missing = missingParams(flow, params);
    if (missing.length > 0)
      throw new Error(
        `${flow.name} is a module: give its required param${missing.length > 1 ? 's' : ''} ` +
          `${missing.join(', ')} (${missing.map((m) => `--with ${m}=...`).join(' ')}), as a scenario's with: does`,
      );
    setup = {
      ...(now !== undefined ? { now } : {}),
      ...(Object.keys(params).length > 0 ? { params } : {}),
      ...(flags.vars && flags.vars.length > 0 ? { vars: simulateVars(flow, flags.vars) } : {}),
      ...(flags.mocks !== undefined
        ? { routes: await loadRoutes(flags.mocks), routesName: basename(flags.mocks) }
        : {}),
    };
    if (flags.caller) {
      const loaded = loadCallerScript(await readToolFile(flags.caller, '--caller'), flags.caller);
      if (!loaded.ok)
        throw new Error(
          'BAD_CALLER\n' +
            loaded.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.path}: ${e.message}`).join('\n'),
        );
      caller = new ScriptedCaller(loaded.script);
    }
  } catch (e) {
    // a refused flow's diagnostics (one a line), a caller script's problems: control characters escaped
    io.err.write(`callscript simulate: ${printableLines((e as Error).message)}\n`);
    return 2;
  }
  const opts: SimOptions = { ...(caller ? caller.options() : {}), ...setup };
  if (flags.from !== undefined) opts.from = flags.from;
  if (flags.to !== undefined) opts.to = flags.to;
  const color = io.output.isTTY === true;
  const tty = !caller && io.input.isTTY === true;
  const out = (events: SimEvent[]) => {
    for (const e of events) {
      caller?.saw(e);
      io.output.write(render(e, { color }));
    }
  };
  const session = new SimSession(flow, opts);
  out(session.start());
  if (caller) {
    while (!session.ended && session.question) {
      const a = caller.answer(session.question);
      out([{ kind: 'answered', text: a.text, by: a.by }, ...session.answer(a.answer)]);
    }
    const unused = caller.unused();
    if (unused.length > 0) io.output.write(`unused actions: ${printable(unused.join(', '))}\n`);
    return 0;
  }
  const lines = lineReader(io, tty);
  try {
    while (!session.ended && session.question) {
      const q = session.question;
      io.output.write(`? ${promptText(q)}\n`);
      const line = await lines.next('> ');
      if (line === null) {
        io.output.write(`${tty ? '\n' : ''}  (end of input: the caller hangs up)\n`);
        out(session.hangUp());
        break;
      }
      if (!tty) io.output.write(`> ${printable(line)}\n`);
      const p = parseLine(q, line);
      if (p.kind === 'vars')
        io.output.write(
          `  vars${q.kind === 'sms' || q.kind === 'http' || q.kind === 'queue' ? ' (as of the last command)' : ''}: ` +
            `${varsText(session.vars)}\n`,
        );
      else if (p.kind === 'invalid') io.output.write(`  ${printable(p.message)}\n`);
      else out([{ kind: 'answered', text: p.text }, ...session.answer(p.answer)]);
    }
  } finally {
    lines.close();
  }
  return 0;
}

/** The most --vars one call takes. */
const MAX_VARS = 100;

/**
 * The start vars of --vars name=value: each a var the flow declares, typed as declared (as the server types an
 * outbound call's vars); throws with every one it cannot take.
 */
export function simulateVars(flow: CompiledFlow, given: string[]): Record<string, Value> {
  if (given.length > MAX_VARS) throw new Error(`--vars: ${given.length} given, at most ${MAX_VARS}`);
  const problems: string[] = [];
  const pairs: Record<string, string> = {};
  for (const g of given) {
    const at = g.indexOf('=');
    const name = at < 0 ? '' : g.slice(0, at).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) {
      problems.push(`--vars ${JSON.stringify(g.slice(0, 80))}: write name=value`);
      continue;
    }
    pairs[name] = g.slice(at + 1);
  }
  const declared = flow.tables.initialVars as Record<string, Value>;
  const { vars, dropped } = startVars(declared, pairs, languageVar(flow));
  const names = Object.keys(declared);
  const lang = flow.model.language?.variable;
  if (lang !== undefined) names.push(`${lang} (its language)`);
  for (const d of dropped)
    problems.push(
      d.name === lang && !Object.hasOwn(declared, d.name)
        ? `--vars ${d.name}: ${d.why}, got ${JSON.stringify(pairs[d.name]?.slice(0, 40))}`
        : !d.why.startsWith('not declared')
          ? `--vars ${d.name}: ${d.why}`
          : `--vars ${d.name}: not a var of ${flow.name} (its vars: ${names.length > 0 ? names.join(', ') : 'none'})`,
    );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return vars;
}

/** The routes of --mocks (the mock-http format), or an error with each problem at its file:line:col. */
async function loadRoutes(file: string): Promise<HttpMock[]> {
  const text = await readToolFile(file, '--mocks');
  const { routes, problems } = parseRoutes(text, file);
  if (problems.length > 0) throw new Error(`--mocks: ${file} is not a routes file:\n${problems.join('\n')}`);
  return routes;
}
