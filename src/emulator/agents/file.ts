/**
 * Reads an agents file from disk (`callscript emulator --agents <file>`): its size is checked before it is read (a
 * file over the caller scripts' 2 MiB is not read at all), then loaded and checked (load.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import { MAX_SCRIPT_BYTES } from '../caller/depth.js';
import { formatScriptErrors } from '../caller/source.js';
import type { AgentBehaviour } from './behaviour.js';
import { loadAgentsFile } from './load.js';

export type AgentsRead = { ok: true; agents: Map<string, AgentBehaviour> } | { ok: false; message: string };

/** The agents of `path`, or what is wrong: `file:line:col path: message` lines with a code frame. */
export async function readAgentsFile(path: string): Promise<AgentsRead> {
  let text: string;
  try {
    const st = await stat(path);
    if (!st.isFile()) return { ok: false, message: `the agents file ${path} is not a file` };
    if (st.size > MAX_SCRIPT_BYTES)
      return {
        ok: false,
        message:
          `${path}:1:1 the file is ${st.size.toLocaleString('en-US')} bytes; an agents file is at most ` +
          `${MAX_SCRIPT_BYTES.toLocaleString('en-US')} bytes (2 MiB), as a caller script`,
      };
    text = await readFile(path, 'utf8');
  } catch (e) {
    return {
      ok: false,
      message: `cannot read the agents file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    };
  }
  const r = loadAgentsFile(text, path);
  return r.ok ? r : { ok: false, message: formatScriptErrors(r.errors, text) };
}
