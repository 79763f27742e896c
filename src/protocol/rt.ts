import type { CallStatus, CommandName } from './commands.js';

/** RT.Request as received, after lossless parsing (src/protocol/request.ts). */
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
  /** The variables map, parsed (numbers beyond 2^53 are read as approximations here). */
  variables: Record<string, unknown>;
  /** The exact JSON text of `variables` as the service sent it, echoed back verbatim. */
  variablesRaw: string;
}

/** A param value ready to send; `bigint` goes out as a JSON integer, digit for digit. */
export type WireValue = string | number | boolean | bigint | null | WireValue[] | { [k: string]: WireValue };

/** RT.Response: one command. `variables` is the raw JSON text echoed from the request. */
export interface RtResponse {
  command: CommandName;
  command_id: number;
  params: Record<string, WireValue>;
  variablesRaw: string;
}
