/**
 * A file a tool is given by a flag (`--mocks`, `--routes`, `--caller`, `--covered`), read
 * as flow files are (a regular file, at most as large as a flow file may be), and why it
 * cannot be, in words: `no such file x`, `x is a directory, not a file`.
 */
import { stat } from 'node:fs/promises';
import { readFlowText, unreadableReason } from '../registry/load.js';
import type { CoverageFile } from './coverage.js';

/** Why `file` cannot be read, in words (no bare error code). */
export async function unreadableFile(file: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `no such file ${file}`;
  if (code === 'EACCES' || code === 'EPERM') return `${file} cannot be read: permission denied`;
  if (code === 'EISDIR' || (code === 'ENOTREG' && (await stat(file).catch(() => undefined))?.isDirectory()))
    return `${file} is a directory, not a file`;
  return `cannot read ${file}: ${unreadableReason(err)}`;
}

/** The text of the file a flag names; throws an Error saying `<flag>: <why>` when it cannot be read. */
export async function readToolFile(file: string, flag: string): Promise<string> {
  try {
    return await readFlowText(file);
  } catch (err) {
    throw new Error(`${flag}: ${await unreadableFile(file, err)}`, { cause: err });
  }
}

/** The coverage data a flag names (`callscript test --coverage-json`); throws saying `<flag>: <why>`. */
export async function readCoverageFile(file: string, flag: string): Promise<CoverageFile> {
  const text = await readToolFile(file, flag);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${flag}: ${file} is not JSON (${(err as Error).message})`, { cause: err });
  }
  if (!data || typeof data !== 'object' || typeof (data as { flows?: unknown }).flows !== 'object')
    throw new Error(`${flag}: ${file} is not coverage data (callscript test --coverage-json writes it)`);
  return data as CoverageFile;
}
