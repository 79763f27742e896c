/**
 * The outcome grammar of a caller script, per command: a short scalar (`read: "12"`,
 * `play_talk_detect: TALK`, `dialout: noanswer`, `record: 12`) or a map of the Outcome
 * fields the command understands (`dialout: { answer: 2, talk: 60 }`, `play: { error: X }`).
 */
import { COMMANDS, type CommandName } from '../../protocol/commands.js';
import { checkE164 } from '../../protocol/formats.js';
import type { Outcome } from './types.js';
import { suggest } from '../suggest.js';

export type Parsed = { ok: true; outcome: Outcome } | { ok: false; message: string; field?: string };

/** The map fields each command takes (error is allowed everywhere). */
export const OUTCOME_FIELDS: Record<CommandName, readonly string[]> = {
  conference: ['result', 'pin', 'pins', 'seconds'],
  dialout: ['answer', 'ring', 'talk', 'hangup_by'],
  hangup: [],
  hangup_callid: [],
  play: ['result'],
  play_record: ['result'],
  play_talk_detect: ['result'],
  play_wav_data: ['result'],
  read: ['digits', 'result'],
  record: ['seconds', 'result'],
  send_dtmf: [],
  simple_conference: ['seconds'],
  start_call_recording: ['result'],
  stop_call_recording: ['result'],
  wait: [],
  wait_for_silence: ['result', 'seconds'],
};

const PLAYED: Record<string, string> = { '0': '0', played: '0', ok: '0', '1': '1', failed: '1' };
const TALK: Record<string, string> = { talk: 'TALK', '0': '0', silent: '0', silence: '0', no_talk: '0' };
const SILENCE: Record<string, string> = { silence: 'SILENCE', timeout: 'TIMEOUT' };
const CONFERENCE = COMMANDS.conference.results.kind === 'enum' ? COMMANDS.conference.results.values : [];
const DIGITS = /^[0-9*#]+$/;

const fail = (message: string, field?: string): Parsed =>
  field === undefined ? { ok: false, message } : { ok: false, message, field };

/** A scalar shorthand (strings; numbers arrive as the text written). */
export function scalarOutcome(command: CommandName, raw: string): Parsed {
  const v = raw.trim();
  const lower = v.toLowerCase();
  switch (command) {
    case 'play':
    case 'play_record':
    case 'play_wav_data':
      return lower in PLAYED
        ? ok({ result: PLAYED[lower]! })
        : fail(`"${v}" is not a ${command} outcome: "0" (played) or "1" (failed)`);
    case 'play_talk_detect':
      return lower in TALK
        ? ok({ result: TALK[lower]! })
        : fail(`"${v}" is not a play_talk_detect outcome: TALK (the callee talks) or "0" (silent)`);
    case 'read':
      if (['timeout', 'silence', 'silent'].includes(lower)) return ok({ result: 'TIMEOUT' });
      return DIGITS.test(v)
        ? ok({ digits: v })
        : fail(`"${v}" is not a read outcome: the keys pressed (0-9, *, #) or TIMEOUT`);
    case 'wait_for_silence':
      return lower in SILENCE
        ? ok({ result: SILENCE[lower]! })
        : fail(`"${v}" is not a wait_for_silence outcome: SILENCE or TIMEOUT`);
    case 'record':
      if (lower === 'ok') return ok({});
      return /^[0-9]+$/.test(v) && Number(v) <= 3600
        ? ok({ seconds: Number(v) })
        : fail(`"${v}" is not a record outcome: the seconds the caller speaks (0 to 3600), or ok`);
    case 'dialout':
      if (['answer', 'answered', 'ok'].includes(lower)) return ok({ answer: 1 });
      if (['noanswer', 'no_answer', 'none'].includes(lower)) return ok({ answer: false });
      if (/^[1-9][0-9]?$/.test(v)) return ok({ answer: Number(v) });
      if (v.startsWith('+')) return checkE164(v) ? fail(`"${v}": ${checkE164(v)}`) : ok({ answer: v });
      return fail(
        `"${v}" is not a dialout outcome: answer (the first target answers), noanswer, a target's position ` +
          `(2) or number (+44...)`,
      );
    case 'conference': {
      const r = CONFERENCE.find((x) => x.toLowerCase() === lower);
      return r ? ok({ result: r }) : fail(`"${v}" is not a conference outcome: one of ${CONFERENCE.join(', ')}`);
    }
    case 'simple_conference':
      return ['ok', 'leave', 'left', 'closed'].includes(lower)
        ? ok({})
        : fail(`"${v}" is not a simple_conference outcome: leave or closed (it has no result)`);
    case 'start_call_recording':
    case 'stop_call_recording':
    case 'send_dtmf':
    case 'wait':
    case 'hangup_callid':
      return ['ok', '0'].includes(lower)
        ? ok({})
        : fail(`"${v}" is not a ${command} outcome: ok, or a map { error: ... } to make it fail`);
    case 'hangup':
      return fail("the flow's hangup command has no outcome");
  }
}

/** A map outcome; `get(k)` reads a field as written. */
export function mapOutcome(command: CommandName, keys: string[], get: (k: string) => unknown): Parsed {
  const allowed = [...OUTCOME_FIELDS[command], 'error'];
  for (const k of keys) {
    if (!allowed.includes(k))
      return fail(
        `${k} is not a field of a ${command} outcome${suggest(k, allowed)}; its fields are ${allowed.join(', ')}`,
        k,
      );
  }
  const out: Outcome = {};
  for (const k of keys) {
    const v = get(k);
    switch (k) {
      case 'error':
        if (typeof v !== 'string' || v === '')
          return fail('error must be a non-empty string: the command_error to report', k);
        out.error = v;
        break;
      case 'result': {
        if (typeof v !== 'string') return fail('result must be a string', k);
        if (
          command === 'read' ||
          command === 'record' ||
          command === 'start_call_recording' ||
          command === 'stop_call_recording'
        ) {
          if (v === '') return fail('result must not be empty', k);
          out.result = v;
          break;
        }
        const p = scalarOutcome(command, v);
        if (!p.ok) return { ...p, field: k };
        out.result = p.outcome.result!;
        break;
      }
      case 'digits':
        if (typeof v !== 'string' || !DIGITS.test(v)) return fail('digits must be the keys pressed: 0-9, * and #', k);
        out.digits = v;
        break;
      case 'seconds':
      case 'ring':
      case 'talk': {
        const n = typeof v === 'string' ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 36000)
          return fail(`${k} must be a number of seconds (0 to 36000)`, k);
        out[k] = n;
        break;
      }
      case 'answer': {
        if (v === false || v === 'false' || v === 'none') out.answer = false;
        else if (v === true || v === 'true') out.answer = 1;
        else if (typeof v === 'string' && /^[1-9][0-9]?$/.test(v)) out.answer = Number(v);
        else if (typeof v === 'string' && v.startsWith('+') && !checkE164(v)) out.answer = v;
        else
          return fail(
            'answer is the position of the target that answers (1, 2...), its E.164 number, true (the first) ' +
              'or false (nobody)',
            k,
          );
        break;
      }
      case 'hangup_by':
        if (v !== 'caller' && v !== 'callee') return fail('hangup_by is caller or callee', k);
        out.hangup_by = v;
        break;
      case 'pin':
      case 'pins': {
        const list = k === 'pin' ? [v] : v;
        if (!Array.isArray(list) || list.length === 0)
          return fail('pins is a list of the PINs typed, one per request, e.g. ["1111", "2468"]', k);
        for (const x of list)
          if (typeof x !== 'string' || !/^[0-9]{0,10}#?$/.test(x))
            return fail(`${JSON.stringify(x)} is not a PIN: up to 10 digits ("" types nothing)`, k);
        out.pins = (list as string[]).map((x) => x.replace(/#$/, ''));
        break;
      }
    }
  }
  if (out.error !== undefined && Object.keys(out).length > 1)
    return fail('a failing command has no other outcome: give error alone', 'error');
  return ok(out);
}

function ok(outcome: Outcome): Parsed {
  return { ok: true, outcome };
}
