/** Assertions on transcripts, command by command: [command, key param, result]. */
import { expect } from 'vitest';
import type { CommandEntry, Transcript } from '../../src/emulator/driver/transcript.js';

/**
 * [command, key, result]: `key` is a prefix of the command's key param (a prompt's text
 * without the default voice, the targets' numbers, a room id...); `result` is the exact
 * result, `error:CODE` for a command_error, or a RegExp.
 */
export type Step = [string, string, string | RegExp];

const SERENA = 'TTS|TTS_EN-GB_SERENA|';

export function keyOf(c: CommandEntry): string {
  const p = c.params as Record<string, any>;
  switch (c.command) {
    case 'play':
    case 'read':
    case 'play_talk_detect':
      return String(p.media_id).replace(SERENA, '');
    case 'dialout':
      return (p.targets as { number: string }[]).map((t) => t.number).join(',');
    case 'conference':
    case 'simple_conference':
      return String(p.id);
    case 'wait':
      return String(p.wait);
    case 'send_dtmf':
      return String(p.digits);
    case 'record':
      return `${p.max_duration}/${p.silence}`;
    case 'play_record':
      return String(p.media_file);
    case 'play_wav_data':
      return 'wav';
    case 'wait_for_silence':
      return `${p.silence_ms}/${p.iterations}/${p.timeout}`;
    case 'start_call_recording':
      return `${p.feeds} ${p.locale}`;
    case 'stop_call_recording':
      return String(p.announce).replace(SERENA, '');
    case 'hangup_callid':
      return String(p.callid);
    default:
      return '';
  }
}

/** The transcript's commands are exactly `steps`, and the call was clean (no violation, warning, unused action). */
export function expectSteps(t: Transcript, steps: Step[]): void {
  const got = t.commands.map((c) => [c.command, keyOf(c), c.error ? `error:${c.error}` : c.result]);
  const shown = got.map((g) => `${g[0]} [${String(g[1]).slice(0, 50)}] -> ${g[2]}`).join('\n');
  expect(got.length, `commands:\n${shown}`).toBe(steps.length);
  steps.forEach(([command, key, result], i) => {
    const [c, k, r] = got[i]!;
    expect(c, `command ${i + 1}:\n${shown}`).toBe(command);
    if (key === '') expect(k, `key of command ${i + 1} (${c})`).toBe('');
    else
      expect(String(k).startsWith(key), `key of command ${i + 1} (${c}): "${k}" does not start with "${key}"`).toBe(
        true,
      );
    if (result instanceof RegExp) expect(r, `result of command ${i + 1} (${c})`).toMatch(result);
    else expect(r, `result of command ${i + 1} (${c})`).toBe(result);
  });
  expect(t.violations, 'violations').toEqual([]);
  expect(t.warnings, 'warnings').toEqual([]);
  expect(t.unused_actions, 'unused actions').toEqual([]);
  expect(t.status).toBe('ended');
}

/** The final request: how the call ended, with what it carried. */
export function expectEnd(
  t: Transcript,
  endedBy: Transcript['ended_by'],
  final: { call_status?: string; command: string; command_result?: string | RegExp },
): void {
  expect(t.ended_by, t.end_reason).toBe(endedBy);
  expect(t.final?.call_status).toBe(final.call_status ?? 'HANGUP');
  expect(t.final?.command).toBe(final.command);
  const last = t.commands[t.commands.length - 1];
  expect(t.final?.command_id).toBe(last ? last.command_id : 0);
  if (final.command_result instanceof RegExp) expect(t.final?.command_result).toMatch(final.command_result);
  else expect(t.final?.command_result).toBe(final.command_result ?? '');
  expect(t.final?.http_status).toBe(200);
}
