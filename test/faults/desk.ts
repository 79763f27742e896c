/**
 * The flow the fault tests call (test/fixtures/http-flows/desk.yaml), a v2 of it for
 * deploys, flows directories of their own, and the exact commands a call gets.
 *
 * desk: read "Press 1 for sales." — 1: dialout, NOANSWER: say "Goodbye."; any other
 * digit: say "Goodbye."; then hangup.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from './service.js';

export const DESK_V1 = readFileSync(new URL('../fixtures/http-flows/desk.yaml', import.meta.url), 'utf8');
/** v2: both prompts changed, so each reply says which version answered it. */
export const DESK_V2 = DESK_V1.replace('Press 1 for sales.', 'Press 1 for sales, or wait.').replace(
  'say: "Goodbye."',
  'say: "Goodbye from v2."',
);

/** A new directory holding `desk.yaml` with this text. */
export function flowsDir(text: string): string {
  const d = mkdtempSync(join(tmpdir(), 'cs-faults-'));
  writeFileSync(join(d, 'desk.yaml'), text);
  return d;
}

const say = (text: string) => `TTS|TTS_EN-GB_SERENA|${text}`;

export type Shape = [string, number, string?];

/**
 * The commands of a desk call where the caller presses `digit`, numbered from `from` (1 for a call that starts
 * normally).
 */
export function deskCommands(digit: string, version: 'v1' | 'v2' = 'v1', from = 1): Shape[] {
  const menu = say(version === 'v1' ? 'Press 1 for sales.' : 'Press 1 for sales, or wait.');
  const bye = say(version === 'v1' ? 'Goodbye.' : 'Goodbye from v2.');
  const names: Shape[] =
    digit === '1'
      ? [
          ['read', 0, menu],
          ['dialout', 0],
          ['play', 0, bye],
          ['hangup', 0],
        ]
      : [
          ['read', 0, menu],
          ['play', 0, bye],
          ['hangup', 0],
        ];
  return names.map(([c, , m], i) => (m === undefined ? [c, from + i] : [c, from + i, m]));
}

/** The commands as deskCommands writes them: name, command_id, and the media of read and play. */
export function shape(cs: Command[]): Shape[] {
  return cs.map((c) =>
    c.command === 'read' || c.command === 'play'
      ? [c.command, c.command_id, c.params.media_id as string]
      : [c.command, c.command_id],
  );
}

/** The caller of a desk call: `digit` at the menu, no answer at the dialout. */
export function deskCaller(digit: string): (c: Command) => string {
  return (c) => (c.command === 'read' ? digit : c.command === 'dialout' ? 'NOANSWER' : '0');
}
