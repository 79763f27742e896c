/**
 * The command catalogue of the real-time interface: every command of the reference
 * (telephony-api.md section 4.2), its parameters with types and bounds, and the set of
 * results it can return (protocol-notes.md). This is the single source for the flow
 * checker, the JSON Schema of flows, the engine's runtime checks and (later) the emulator.
 */

export const COMMAND_NAMES = [
  'conference',
  'dialout',
  'hangup',
  'hangup_callid',
  'play',
  'play_record',
  'play_talk_detect',
  'play_wav_data',
  'read',
  'record',
  'send_dtmf',
  'simple_conference',
  'start_call_recording',
  'stop_call_recording',
  'wait',
  'wait_for_silence',
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

/** Named string formats (telephony-api.md 2.3), checked by src/protocol/formats.ts. */
export type FormatName =
  | 'rt_media'
  | 'phone_number'
  | 'cli_phone_number'
  | 'cdr_customer_field'
  | 'rt_conference_id'
  | 'callid'
  | 'locale'
  | 'dtmf_digits'
  | 'pin_code'
  | 'base64_wav'
  | 'media_file'
  | 'sms_sender'
  | 'sms_user_data'
  | 'url';

export type ParamSpec =
  | { type: 'int'; min: number; max: number; default?: number; doc: string }
  | { type: 'bool'; default?: boolean; doc: string }
  | { type: 'string'; format?: FormatName; enum?: readonly string[]; default?: string; doc: string }
  /** A media: integer library id, `TTS|voice|text`, or `0` for none. */
  | { type: 'media'; doc: string }
  /** dialout targets: `[{ number: E.164, timeout: 5..300 }]`, called in order. */
  | { type: 'targets'; doc: string };

/**
 * What a command can return in `command_result`:
 * - `enum`: exactly these strings;
 * - `digits`: a DTMF string (0-9, *) of 1..max_digits keys, or one of `also`;
 * - `any`: an opaque string (file name, recording hash): only patterns or `default` apply;
 * - `none`: the empty string (the command has no result).
 */
export type ResultSet =
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'digits'; also: readonly string[] }
  | { kind: 'any'; doc: string }
  | { kind: 'none' };

export interface CommandSpec {
  name: CommandName;
  doc: string;
  params: Record<string, ParamSpec>;
  results: ResultSet;
  /** Blocks until the room closes or the user leaves (conference commands). */
  blocking?: boolean;
}

const media = (doc: string): ParamSpec => ({ type: 'media', doc });

export const COMMANDS: Record<CommandName, CommandSpec> = {
  conference: {
    name: 'conference',
    doc: 'Creates the room if needed and puts the call in it; blocks until the room closes. The user leaves with *.',
    blocking: true,
    params: {
      id: { type: 'string', format: 'rt_conference_id', doc: 'Room id; calls bridged together use the same id.' },
      pin_code: {
        type: 'string',
        format: 'pin_code',
        doc: 'PIN to ask for: digits only, 10 at most, ended by #; empty means auto-join.',
      },
      pin_max_tries: { type: 'int', min: 1, max: 10, default: 3, doc: 'Number of PIN requests.' },
      pin_wait: { type: 'int', min: 0, max: 30, default: 5, doc: 'Seconds to wait for a digit.' },
      pin_prompt: media('Played to ask for the PIN; repeated until a PIN is entered.'),
      pin_error: media('Played when the PIN is invalid.'),
      pin_valid: media('Played when the PIN is valid.'),
      welcome: media('Played before joining, before pin_prompt.'),
      waiting: media('Looped while only one participant is present.'),
      user_join: media('Played when someone joins.'),
      user_leave: media('Played when someone leaves.'),
      auto_leave_announce: media('Played when leaving because last participant.'),
      auto_leave_when_alone: {
        type: 'bool',
        default: false,
        doc: 'Leave automatically when last participant (applies when someone leaves, not when joining first).',
      },
    },
    results: {
      kind: 'enum',
      values: ['CONFERENCE_CLOSED', 'LAST_PARTICIPANT', 'LEFT_CONFERENCE', 'PIN_ERROR', 'PIN_TIMEOUT'],
    },
  },
  dialout: {
    name: 'dialout',
    doc:
      'Calls the targets in order and bridges the first that answers; when bridged, the call ends when either ' +
      'side hangs up.',
    params: {
      targets: {
        type: 'targets',
        doc: 'Numbers called one after the other until one answers: `[{ number, timeout }]`.',
      },
      cli: { type: 'string', format: 'cli_phone_number', doc: 'Outbound caller id: E.164 or BLOCKED.' },
      ringtone: { type: 'string', enum: ['MUSIC', 'RING'], doc: 'What the caller hears while the targets ring.' },
      whisper: media('Whispered to the callee before bridging.'),
      cdr_field: {
        type: 'string',
        format: 'cdr_customer_field',
        doc: 'Custom value written in the call record (32 alphanumerics at most).',
      },
    },
    results: { kind: 'enum', values: ['NOANSWER'] },
  },
  hangup: {
    name: 'hangup',
    doc: 'Hangs up the current call.',
    params: {},
    results: { kind: 'none' },
  },
  hangup_callid: {
    name: 'hangup_callid',
    doc: 'Hangs up another call, by its callid.',
    params: {
      callid: {
        type: 'string',
        format: 'callid',
        doc: 'The call to hang up: a 64-bit unsigned integer, sent as a JSON integer.',
      },
    },
    results: { kind: 'none' },
  },
  play: {
    name: 'play',
    doc: 'Plays a media.',
    params: { media_id: media('The media to play.') },
    results: { kind: 'enum', values: ['0', '1'] },
  },
  play_record: {
    name: 'play_record',
    doc: 'Plays a recording made by `record`.',
    params: {
      media_file: { type: 'string', format: 'media_file', doc: 'The temporary file name returned by record.' },
    },
    results: { kind: 'enum', values: ['0', '1'] },
  },
  play_talk_detect: {
    name: 'play_talk_detect',
    doc: 'Plays a media while listening; aborts and returns TALK when speech is detected.',
    params: {
      media_id: media('The message to play.'),
      analysistime_ms: { type: 'int', min: 1, max: 60000, default: 4000, doc: 'Analysis window from the start.' },
      min_ms: { type: 'int', min: 1, max: 60000, default: 500, doc: 'Shortest non-silence counted as talk.' },
      max_ms: { type: 'int', min: 1, max: 60000, default: 60000, doc: 'Longest non-silence counted as talk.' },
      silence_ms: { type: 'int', min: 1, max: 5000, default: 5, doc: 'Silence that must follow the talk.' },
    },
    results: { kind: 'enum', values: ['0', 'TALK'] },
  },
  play_wav_data: {
    name: 'play_wav_data',
    doc: 'Plays a base64-encoded WAV file (8000 Hz, 16-bit, mono).',
    params: {
      audio_data: { type: 'string', format: 'base64_wav', doc: 'Base64 of a WAV file, 8000 Hz, 16-bit, mono.' },
    },
    results: { kind: 'enum', values: ['0', '1'] },
  },
  read: {
    name: 'read',
    doc: 'Plays a prompt and collects DTMF; input ends with # or at max_digits.',
    params: {
      media_id: media('The prompt.'),
      attempts: {
        type: 'int',
        min: 1,
        max: 10,
        default: 3,
        doc: 'How many times the service plays the prompt and waits.',
      },
      max_digits: { type: 'int', min: 1, max: 20, default: 1, doc: 'Input ends when this many keys are pressed.' },
      timeout_ms: { type: 'int', min: 100, max: 30000, default: 5000, doc: 'Time allowed for input.' },
    },
    results: { kind: 'digits', also: ['TIMEOUT'] },
  },
  record: {
    name: 'record',
    doc: 'Records the caller; stops on #, on silence, or at max_duration. Returns a temporary file name.',
    params: {
      max_duration: { type: 'int', min: 0, max: 300, doc: 'Seconds; 0 disables the limit.' },
      silence: { type: 'int', min: 0, max: 20, doc: 'Seconds of silence that stop the recording; 0 disables.' },
    },
    results: { kind: 'any', doc: 'a temporary media file name, usable by play_record' },
  },
  send_dtmf: {
    name: 'send_dtmf',
    doc: 'Sends DTMF tones.',
    params: {
      digits: { type: 'string', format: 'dtmf_digits', doc: 'Characters 0-9, *, #.' },
      duration_ms: { type: 'int', min: 1, max: 5000, doc: 'Duration of each tone.' },
      timeout_ms: { type: 'int', min: 0, max: 10000, doc: 'Time between tones.' },
    },
    results: { kind: 'enum', values: ['0'] },
  },
  simple_conference: {
    name: 'simple_conference',
    doc: 'A simple conference bridge; blocks until the room closes; the user leaves with *.',
    blocking: true,
    params: {
      id: { type: 'string', format: 'rt_conference_id', doc: 'Room id.' },
      auto_leave_when_alone: { type: 'bool', default: true, doc: 'Leave automatically when last participant.' },
    },
    results: { kind: 'none' },
  },
  start_call_recording: {
    name: 'start_call_recording',
    doc: 'Starts recording the call; returns the recording hash.',
    params: {
      announce: media('Announces that the call is recorded; 0 means none.'),
      feeds: { type: 'string', enum: ['all', 'both', 'leg_a', 'leg_b'], default: 'both', doc: 'Which legs to record.' },
      locale: {
        type: 'string',
        format: 'locale',
        doc: 'Spoken language for transcription (ll_CC); empty means auto-detection.',
      },
      transcription: { type: 'bool', doc: 'Enables transcription; unset uses the account default.' },
      ner: { type: 'bool', default: true, doc: 'Named entity recognition (with transcription).' },
      pii: { type: 'bool', default: true, doc: 'Personal data detection (with transcription).' },
      sentiment: { type: 'bool', default: true, doc: 'Sentiment analysis (with transcription).' },
    },
    results: { kind: 'any', doc: 'the recording hash' },
  },
  stop_call_recording: {
    name: 'stop_call_recording',
    doc: 'Stops recording the call; returns the recording hash.',
    params: { announce: media('Announces that recording stopped; 0 means none.') },
    results: { kind: 'any', doc: 'the recording hash' },
  },
  wait: {
    name: 'wait',
    doc: 'Waits a number of seconds.',
    params: { wait: { type: 'int', min: 1, max: 30, doc: 'Seconds.' } },
    results: { kind: 'enum', values: ['0'] },
  },
  wait_for_silence: {
    name: 'wait_for_silence',
    doc: 'Waits until the line is silent.',
    params: {
      silence_ms: { type: 'int', min: 1, max: 5000, doc: 'Minimum silence.' },
      iterations: { type: 'int', min: 1, max: 10, doc: 'Number of tries.' },
      timeout: { type: 'int', min: 0, max: 300, doc: 'Seconds; 0 disables.' },
    },
    results: { kind: 'enum', values: ['SILENCE', 'TIMEOUT'] },
  },
};

export function isCommandName(name: string): name is CommandName {
  return Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/**
 * Parameters a command step may give as a single scalar instead of a map:
 * `play: "Hello"`, `wait: 5`, `send_dtmf: "12#"`, `play_record: "{{ vars.msg }}"`.
 */
export const SCALAR_PARAM: Partial<Record<CommandName, string>> = {
  play: 'media_id',
  play_record: 'media_file',
  play_wav_data: 'audio_data',
  hangup_callid: 'callid',
  send_dtmf: 'digits',
  wait: 'wait',
  stop_call_recording: 'announce',
};

/**
 * Parameters without which a command is meaningless. The reference does not say which
 * params are required: this is our decision, shared by the flow checker and the emulator's
 * conformance checks.
 */
export const REQUIRED_COMMAND_PARAMS: Partial<Record<CommandName, readonly string[]>> = {
  conference: ['id'],
  dialout: ['targets'],
  hangup_callid: ['callid'],
  play: ['media_id'],
  play_record: ['media_file'],
  play_talk_detect: ['media_id'],
  play_wav_data: ['audio_data'],
  read: ['media_id'],
  send_dtmf: ['digits'],
  simple_conference: ['id'],
  wait: ['wait'],
};

/** Friendly aliases accepted in flows, mapped to the reference's parameter names. */
export const PARAM_ALIASES: Partial<Record<CommandName, Record<string, string>>> = {
  read: { prompt: 'media_id' },
  play: { prompt: 'media_id' },
  play_talk_detect: { prompt: 'media_id' },
};

/** Call statuses (protocol-notes): live ones expect a command, terminal ones end the call. */
export const LIVE_STATUSES = ['INCOMING_CALL', 'UP'] as const;
export const TERMINAL_STATUSES = ['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const;
export type CallStatus = (typeof LIVE_STATUSES)[number] | (typeof TERMINAL_STATUSES)[number];

const KEYS = /^[0-9*]+$/;

/**
 * `value` is a result `command` returns (its result set above): what a terminal request may carry for the command it
 * interrupted (protocol-notes.md: "its result or error, if any"). The empty string never is: it is no result.
 */
export function isCommandResult(command: string, value: string): boolean {
  if (value === '' || !Object.hasOwn(COMMANDS, command)) return false;
  const spec = COMMANDS[command as CommandName];
  const set = spec.results;
  switch (set.kind) {
    case 'enum':
      return set.values.includes(value);
    case 'digits': {
      const max = spec.params.max_digits;
      return set.also.includes(value) || (KEYS.test(value) && value.length <= (max?.type === 'int' ? max.max : 20));
    }
    case 'any':
      return true;
    case 'none':
      return false;
  }
}
