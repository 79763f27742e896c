/**
 * Runs one command in simulated time: from its (checked, standard-named) params and the
 * caller's outcome, the result or error the next request reports, how long it took, and
 * what the caller did in words. hangup and hangup_callid are the driver's (call.ts).
 */
import type { CommandName } from '../../protocol/commands.js';
import type { Outcome } from '../caller/types.js';
import type { Ids } from '../ids.js';
import { checkWav, mediaMs } from './media.js';

export interface CallMedia {
  callid: string;
  ids: Ids;
  /** Files recorded on this call -> their length in ms. */
  recordings: Map<string, number>;
  /** The call recording in progress (start_call_recording), if any. */
  activeRecording?: string;
}

export interface SimResult {
  result: string;
  error: string;
  durationMs: number;
  caller: string;
  /** A dialout was answered: the legs are bridged; who hangs up. */
  bridged?: 'caller' | 'callee';
  /** Things the script asked for that the command makes impossible. */
  warnings: string[];
}

type P = Record<string, unknown>;
type Sim = (p: P, o: Outcome, m: CallMedia) => SimResult;

const s = (ms: number) => `${+(ms / 1000).toFixed(1)} s`;
const done = (result: string, durationMs: number, caller: string, warnings: string[] = []): SimResult => ({
  result,
  error: '',
  durationMs,
  caller,
  warnings,
});
const int = (v: unknown, d: number) => (typeof v === 'number' ? v : d);

export function simulate(command: CommandName, params: P, outcome: Outcome, media: CallMedia): SimResult {
  if (outcome.error !== undefined)
    return {
      result: '',
      error: outcome.error,
      durationMs: 200,
      caller: `failed with ${outcome.error} (as scripted)`,
      warnings: [],
    };
  return SIMS[command](params, outcome, media);
}

const played =
  (what: string): Sim =>
  (p, o) => {
    const ms = mediaMs(p[what]);
    const r = o.result ?? '0';
    return done(r, r === '0' ? ms : 200, r === '0' ? `listened (${s(ms)})` : 'the media failed to play (as scripted)');
  };

const SIMS: Record<CommandName, Sim> = {
  play: played('media_id'),
  hangup: () => done('', 0, ''),
  hangup_callid: () => done('', 0, ''),

  play_record: (p, o, m) => {
    const file = String(p.media_file);
    const len = m.recordings.get(file);
    if (o.result !== undefined)
      return done(
        o.result,
        len ?? 200,
        o.result === '0' ? 'listened to the recording' : 'the recording failed to play (as scripted)',
      );
    if (len === undefined) return done('1', 200, `no recording ${file} on this call: result 1 (error)`);
    return done('0', len, `listened to the recording (${s(len)})`);
  },

  play_wav_data: (p, o) => {
    const wav = checkWav(String(p.audio_data));
    if (o.result !== undefined)
      return done(
        o.result,
        wav.ok ? wav.ms : 200,
        o.result === '0' ? 'listened' : 'the audio failed to play (as scripted)',
      );
    return wav.ok
      ? done('0', wav.ms, `listened (${s(wav.ms)} of audio)`)
      : done('1', 200, `${wav.reason}: result 1 (error)`);
  },

  play_talk_detect: (p, o) => {
    const ms = mediaMs(p.media_id);
    if ((o.result ?? '0') === 'TALK') {
      const talk = int(p.min_ms, 500) + 200;
      const at = Math.min(1000, ms);
      return done('TALK', at + talk + int(p.silence_ms, 5), `said "Hello?" over the message (${talk} ms of speech)`);
    }
    return done(o.result ?? '0', ms, `stayed silent (${s(ms)})`);
  },

  read: (p, o) => {
    const prompt = mediaMs(p.media_id);
    const max = int(p.max_digits, 1);
    const timeout = int(p.timeout_ms, 5000);
    const attempts = int(p.attempts, 3);
    if (o.result !== undefined) return done(o.result, prompt + 1000, `answered ${o.result} (as scripted)`);
    const keys = o.digits ?? '1';
    let got = '';
    let ended = false;
    let used = 0;
    for (const ch of keys) {
      used++;
      if (ch === '#') {
        ended = true;
        break;
      }
      got += ch;
      if (got.length >= max) {
        ended = true;
        break;
      }
    }
    const extra = used < keys.length ? ` (${keys.slice(used)} after the end of input ignored)` : '';
    if (ended && got !== '') return done(got, prompt + 400 * used, `pressed ${keys}${extra}`);
    if (keys === '')
      return done(
        'TIMEOUT',
        attempts * (prompt + timeout),
        `pressed nothing (${attempts} attempt${attempts > 1 ? 's' : ''} of ${s(timeout)})`,
      );
    const why = got === '' ? 'only #' : `${got.length} of ${max} keys and no #`;
    return done('TIMEOUT', prompt + 400 * used + timeout, `pressed ${keys} (${why}): TIMEOUT`);
  },

  record: (p, o, m) => {
    const spoke = (o.seconds ?? 8) * 1000;
    const max = int(p.max_duration, 0) * 1000;
    const silence = int(p.silence, 0) * 1000;
    let len = spoke;
    let how: string;
    if (max > 0 && spoke >= max) {
      len = max;
      how = `spoke ${s(spoke)}: stopped at max_duration (${s(max)})`;
    } else if (silence > 0) how = `spoke ${s(spoke)}, then ${s(silence)} of silence ended the recording`;
    else how = `spoke ${s(spoke)}, then pressed #`;
    const file = o.result ?? `rec-${m.callid}-${m.ids.hex(8)}.wav`;
    m.recordings.set(file, len);
    return done(file, len + (max > 0 && spoke >= max ? 0 : silence), how);
  },

  send_dtmf: (p) => {
    const digits = String(p.digits ?? '');
    const ms = digits.length * (int(p.duration_ms, 100) + int(p.timeout_ms, 100));
    return done('0', ms, `heard the tones ${digits}`);
  },

  wait: (p) => done('0', int(p.wait, 1) * 1000, `waited ${int(p.wait, 1)} s`),

  wait_for_silence: (p, o) => {
    const silence = int(p.silence_ms, 1000);
    if ((o.result ?? 'SILENCE') === 'TIMEOUT') {
      const t = int(p.timeout, 0);
      const warn = t === 0 ? ['wait_for_silence.timeout is 0 (disabled): the service never answers TIMEOUT'] : [];
      return done('TIMEOUT', t * 1000, `kept talking for ${t} s`, warn);
    }
    const talk = (o.seconds ?? 2) * 1000;
    return done('SILENCE', talk + silence, `talked ${s(talk)}, then ${s(silence)} of silence`);
  },

  dialout: (p, o) => dialout(p, o),
  conference: (p, o) => conference(p, o),

  simple_conference: (_p, o) => {
    const ms = (o.seconds ?? 60) * 1000;
    return done('', ms, `in the room ${s(ms)}, then left with *`);
  },

  start_call_recording: (p, o, m) => {
    const hash = o.result ?? m.ids.hash();
    m.activeRecording = hash;
    return done(hash, mediaMs(p.announce), `the call is recorded (${hash})`);
  },

  stop_call_recording: (p, o, m) => {
    const hash = o.result ?? m.activeRecording;
    if (hash === undefined)
      return {
        result: '',
        error: 'NO_ACTIVE_RECORDING',
        durationMs: 0,
        caller: 'no call recording was started: command_error NO_ACTIVE_RECORDING',
        warnings: [],
      };
    m.activeRecording = undefined;
    return done(hash, mediaMs(p.announce), `the recording ${hash} stopped`);
  },
};

function dialout(p: P, o: Outcome): SimResult {
  const targets = (p.targets as { number: string; timeout: number }[] | undefined) ?? [];
  const warnings: string[] = [];
  let who = o.answer === undefined ? 1 : o.answer;
  if (typeof who === 'string') {
    const i = targets.findIndex((t) => t.number === who);
    if (i < 0)
      warnings.push(
        `the script has ${who} answer, which is not a target of this dialout ` +
          `(${targets.map((t) => t.number).join(', ')}): nobody answers`,
      );
    who = i < 0 ? false : i + 1;
  } else if (typeof who === 'number' && who > targets.length) {
    warnings.push(`the script has target ${who} answer; this dialout has ${targets.length}: nobody answers`);
    who = false;
  }
  const parts: string[] = [];
  let ms = 0;
  const upTo = who === false ? targets.length : who - 1;
  for (const t of targets.slice(0, upTo)) {
    ms += t.timeout * 1000;
    parts.push(`${t.number} did not answer (${t.timeout} s)`);
  }
  if (who === false) return done('NOANSWER', ms, parts.join('; ') || 'nobody answered', warnings);
  const t = targets[who - 1]!;
  const ring = Math.min(o.ring ?? 5, t.timeout - 1);
  const talk = o.talk ?? 30;
  const by = o.hangup_by ?? 'callee';
  ms += (ring + talk) * 1000 + (typeof p.whisper === 'string' ? mediaMs(p.whisper) : 0);
  parts.push(`${t.number} answered after ${ring} s; bridged ${talk} s; the ${by} hung up`);
  return { ...done('', ms, parts.join('; '), warnings), bridged: by };
}

function conference(p: P, o: Outcome): SimResult {
  const pin = typeof p.pin_code === 'string' ? p.pin_code : '';
  const tries = int(p.pin_max_tries, 3);
  const pinWait = int(p.pin_wait, 5) * 1000;
  const warnings: string[] = [];
  let ms = mediaMs(p.welcome);
  const typed: string[] = [];
  let pinResult: string | undefined;
  if (pin !== '') {
    const pins = o.pins ?? [pin];
    pinResult = 'PIN_ERROR';
    for (let i = 0; i < tries; i++) {
      const t = pins[Math.min(i, pins.length - 1)]!;
      ms += mediaMs(p.pin_prompt);
      if (t === '') {
        ms += pinWait;
        typed.push('nothing');
        pinResult = 'PIN_TIMEOUT';
        break;
      }
      ms += 400 * (t.length + 1);
      if (t === pin) {
        typed.push(`${t} (right)`);
        pinResult = undefined;
        break;
      }
      typed.push(`${t} (wrong)`);
      ms += mediaMs(p.pin_error);
    }
  } else if (o.pins) warnings.push('the script types a PIN, but this conference asks for none (pin_code is empty)');
  const explicit = o.result;
  if (explicit && explicit.startsWith('PIN_') && pin === '')
    warnings.push(`the script answers ${explicit}, but this conference asks for no PIN (pin_code is empty)`);
  const result = explicit ?? pinResult ?? 'CONFERENCE_CLOSED';
  const pinText = typed.length ? `typed PIN ${typed.join(', ')}; ` : '';
  if (result === 'PIN_ERROR' || result === 'PIN_TIMEOUT')
    return done(result, ms, `${pinText}not let in: ${result}`, warnings);
  const stay = (o.seconds ?? 60) * 1000;
  const how: Record<string, string> = {
    CONFERENCE_CLOSED: 'the room was closed',
    LAST_PARTICIPANT: 'left as the last participant',
    LEFT_CONFERENCE: 'left with *',
  };
  return done(result, ms + stay, `${pinText}in the room ${s(stay)}, ${how[result] ?? result}`, warnings);
}
