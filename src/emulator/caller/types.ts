/**
 * A caller script, once loaded and checked (load.ts): what the person on the line does.
 * Format and semantics: docs/caller-script.md; JSON Schema: schemas/caller.schema.json.
 */
import type { CommandName } from '../../protocol/commands.js';

/** What happens when a command runs; every field is optional. */
export interface Outcome {
  /** The command_result, as is (after the caller's shorthand is read). */
  result?: string;
  /** Make the command fail with this command_error. */
  error?: string;
  /** read: the keys pressed (input ends at # or at max_digits; fewer without # = TIMEOUT). */
  digits?: string;
  /**
   * record: seconds spoken; conference / simple_conference: seconds in the room; wait_for_silence: seconds until
   * silence.
   */
  seconds?: number;
  /** dialout: which target answers (1-based index or its number), or false: nobody. */
  answer?: number | string | false;
  /** dialout: seconds the answering target rings first. */
  ring?: number;
  /** dialout: seconds of conversation once bridged. */
  talk?: number;
  /** dialout: who hangs up the bridged call (it ends either way). */
  hangup_by?: 'caller' | 'callee';
  /** conference: the PINs the caller types, one per PIN request. */
  pins?: string[];
}

export type Action =
  | { kind: 'command'; command: CommandName; outcome: Outcome; label: string; where: string }
  /** The next command, whatever it is, fails with this command_error. */
  | { kind: 'error'; error: string; label: string; where: string }
  /** The caller hangs up during the next such command (or the next command: 'any'). */
  | { kind: 'hangup'; command: CommandName | 'any'; label: string; where: string }
  /** The caller hangs up once the next such command is over (during the command after it). */
  | { kind: 'hangup_after'; command: CommandName | 'any'; label: string; where: string };

export const CALL_STATUSES_FIRST = ['UP', 'INCOMING_CALL'] as const;
export const ANSWERS = ['ANSWER', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const;

export interface CallSetup {
  /** cli_number: the caller's number ("" = withheld). */
  from: string;
  /** cli_name. */
  name: string;
  /** number: the number dialled (inbound) or called (outbound). */
  to: string;
  /** date_started; the emulator's clock when absent. */
  date?: string;
  cdr_field: string;
  /** The `app` field of calls made straight to a URL (an app's calls carry its hash). */
  app: string;
  /** call_status of the first request. */
  status: (typeof CALL_STATUSES_FIRST)[number];
  /** Outbound calls: whether the called party answers, or how the call fails. */
  answer: (typeof ANSWERS)[number];
  /** variables of the first request, as JSON text (the service sends {}). */
  variables: string;
  /** The caller hangs up this many seconds into the call, whatever is running. */
  hangup_at?: number;
  /** The emulator hangs up after this many commands (a flow that loops). */
  max_commands?: number;
}

export interface CallerScript {
  /** A label for the transcript: the script's `name`, else its file. */
  name: string;
  file: string;
  call: CallSetup;
  actions: Action[];
  defaults: Partial<Record<CommandName, Outcome>>;
}

export const DEFAULT_CALL: CallSetup = {
  from: '+447700900123',
  name: '',
  to: '+442079460000',
  cdr_field: '',
  app: '',
  status: 'UP',
  answer: 'ANSWER',
  variables: '{}',
};

/** The default caller: each command's first success outcome, 1 at every read. */
export function defaultCaller(): CallerScript {
  return { name: 'default caller', file: '', call: { ...DEFAULT_CALL }, actions: [], defaults: {} };
}
