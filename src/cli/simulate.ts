/**
 * `callscript simulate <flow>`: an interactive call in the terminal (docs/simulate.md).
 * The person on the line is the user (line by line through node:readline: a plain
 * terminal, tmux, or piped stdin) or a caller script (--caller). The call itself is
 * src/testing/simulate.ts.
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { CompiledFlow } from '../engine/compile.js';
import { envOf, loadFlow } from './paths.js';
import { loadCallerScript } from '../emulator/caller/load.js';
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
  try {
    flow = await loadFlow(ref, flags.flows ?? process.env.FLOWS_DIR ?? 'flows', envOf(flags.env));
    if (flags.caller) {
      const loaded = loadCallerScript(await readFile(flags.caller, 'utf8'), flags.caller);
      if (!loaded.ok)
        throw new Error(
          'BAD_CALLER\n' +
            loaded.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.path}: ${e.message}`).join('\n'),
        );
      caller = new ScriptedCaller(loaded.script);
    }
  } catch (e) {
    io.err.write(`callscript simulate: ${(e as Error).message}\n`);
    return 2;
  }
  const opts: SimOptions = caller ? caller.options() : {};
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
    if (unused.length > 0) io.output.write(`unused actions: ${unused.join(', ')}\n`);
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
      if (!tty) io.output.write(`> ${line}\n`);
      const p = parseLine(q, line);
      if (p.kind === 'vars')
        io.output.write(`  vars${q.kind === 'sms' ? ' (as of the last command)' : ''}: ${varsText(session.vars)}\n`);
      else if (p.kind === 'invalid') io.output.write(`  ${p.message}\n`);
      else out([{ kind: 'answered', text: p.text }, ...session.answer(p.answer)]);
    }
  } finally {
    lines.close();
  }
  return 0;
}
