/**
 * What happened on one emulated call: every command the customer server sent, the
 * caller's part, timing, and every protocol violation with the offending field.
 * Transcripts are plain JSON (integers beyond 2^53 in params appear as strings of digits).
 */

export interface Violation {
  /** Which request's reply (1 = the reply to the first request). */
  request: number;
  /** A stable code, e.g. OUT_OF_BOUNDS, UNKNOWN_COMMAND, LATE_REPLY (docs/emulator.md). */
  code: string;
  /** The offending field: `command`, `params.max_digits`, `body`, `status`, `time`... */
  field: string;
  message: string;
}

export interface Warning {
  request: number;
  code: string;
  field?: string;
  message: string;
}

export interface CommandEntry {
  /** 1-based position in the call. */
  n: number;
  /** The request this command answered (1-based). */
  request: number;
  command: string;
  /** As the server sent it (digits in a string when beyond 2^53). */
  command_id: number | string;
  /** As the server sent them, older spellings included. */
  params: Record<string, unknown>;
  /** Older parameter spellings the server used, e.g. `seconds (wait)`. */
  spellings?: string[];
  /** Simulated call time when the command started, in ms from the first request. */
  at_ms: number;
  /** Simulated duration of the command. */
  duration_ms: number;
  /** Real time the server took to reply with this command. */
  reply_ms: number;
  /** command_result reported for it ("" when none or on error / interruption). */
  result: string;
  /** command_error reported for it ("" when none). */
  error: string;
  /** What the caller (or the simulated far end) did, in words. */
  caller: string;
  /** done; interrupted (the call ended during it); refused (a protocol violation: not run). */
  status: 'done' | 'interrupted' | 'refused';
}

export type EndedBy =
  /** The server answered `hangup`. */
  | 'flow'
  /** The caller hung up (caller script). */
  | 'caller'
  /** A dialout was answered, bridged, and a leg hung up. */
  | 'bridge'
  /** Another call's hangup_callid named this call. */
  | 'hangup_callid'
  /** The outbound call was not answered (NOANSWER, BUSY...). */
  | 'not_answered'
  /** The emulator hung up: a protocol violation, a network error, the command limit. */
  | 'emulator';

export interface FinalRequest {
  request: number;
  call_status: string;
  command: string;
  command_id: number | string;
  command_result: string;
  command_error: string;
  /** HTTP status of the reply (its body is ignored, as the service does); absent if none. */
  http_status?: number;
  reply_ms?: number;
}

export interface Transcript {
  /** Transcript id; for outbound calls also the request_hash of its requests. */
  id: string;
  callid: string;
  direction: 'inbound' | 'outbound';
  url: string;
  app: string;
  request_hash: string | null;
  /** cli_number, cli_name and number of the requests. */
  from: string;
  cli_name: string;
  to: string;
  date_started: string;
  cdr_field: string;
  /** The caller script (file name, or "default caller"). */
  caller: string;
  status: 'running' | 'ended';
  ended_by?: EndedBy;
  end_reason?: string;
  /** Simulated call duration. */
  duration_ms: number;
  /** Requests POSTed to the server, terminal one included. */
  requests: number;
  commands: CommandEntry[];
  final?: FinalRequest;
  violations: Violation[];
  warnings: Warning[];
  /** Caller script actions that no command used, with where they are written. */
  unused_actions: string[];
  /** SMS the customer server sent for this call while answering one of its requests. */
  sms: SmsNote[];
}

/** An SMS sent during the call (see docs/emulator.md, "SMS in transcripts"). */
export interface SmsNote {
  /** The request being answered when the SMS was sent. */
  request: number;
  hash: string;
  from: string;
  to: string;
  text: string;
  encoding: string;
  parts: number;
  /** How it was tied to the call: the x-callscript-callid header, or the only call being answered then. */
  matched_by: 'header' | 'timing';
}
