/** Builders of RT.Request bodies for tests. */
export interface RtFields {
  app: string;
  callid: string | number;
  request_hash: string | null;
  cli_name: string;
  cli_number: string;
  date_started: string;
  number: string;
  command: string;
  command_id: number;
  command_result: string;
  command_error: string;
  call_status: string;
  cdr_field: string;
  variables: Record<string, unknown> | string;
}

export function rtFields(over: Partial<RtFields> = {}): RtFields {
  return {
    app: 'APP12345',
    callid: '4242',
    request_hash: null,
    cli_name: 'Ada',
    cli_number: '+33612345678',
    date_started: '2026-11-22 10:00:00',
    number: '+33123456789',
    command: '',
    command_id: 0,
    command_result: '',
    command_error: '',
    call_status: 'UP',
    cdr_field: '',
    variables: {},
    ...over,
  };
}

/**
 * The JSON text the service would send: callid written as a bare JSON integer digit for
 * digit (it may exceed 2^53), variables as raw JSON text when given as a string.
 */
export function rtBody(over: Partial<RtFields> = {}): string {
  const f = rtFields(over);
  const { callid, variables, ...rest } = f;
  const json = JSON.stringify({ ...rest, callid: '@@CALLID@@', variables: '@@VARS@@' });
  return json
    .replace('"@@CALLID@@"', String(callid))
    .replace('"@@VARS@@"', typeof variables === 'string' ? variables : JSON.stringify(variables));
}
