import type { CallStatus, CommandName } from './commands.js';

/** RT.Request as received, after strict lossless parsing (src/protocol/request.ts). */
export interface RtRequest {
  app: string;
  /** The callid as its exact decimal digits (it may exceed 2^53). */
  callid: string;
  request_hash: string | null;
  cli_name: string;
  cli_number: string;
  date_started: string;
  number: string;
  command: string;
  command_id: number;
  command_result: string;
  command_error: string;
  call_status: CallStatus;
  cdr_field: string;
  /**
   * The variables map as the engine reads it: keys in sorted order, a number that a JS
   * number holds exactly as that number, any other (beyond 2^53, 1e400) as its canonical
   * decimal text (src/protocol/json-number.ts).
   */
  variables: Record<string, unknown>;
  /** The canonical JSON text of `variables` (the same data, every digit kept), echoed in replies. */
  variablesRaw: string;
}

/** A param value ready to send; `bigint` goes out as a JSON integer, digit for digit. */
export type WireValue = string | number | boolean | bigint | null | WireValue[] | { [k: string]: WireValue };

/** RT.Response: one command. `variables` is the request's variablesRaw (its canonical JSON text), echoed. */
export interface RtResponse {
  command: CommandName;
  command_id: number;
  params: Record<string, WireValue>;
  variablesRaw: string;
}
