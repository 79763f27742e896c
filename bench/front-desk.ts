/**
 * The requests the benchmarks send: a real-time request body as the service writes it (a callid above 2^53, to
 * exercise the lossless path), and the bench's front-desk call.
 */

export function rtBody(callid: bigint, command: string, id: number, result: string, status = 'UP', error = ''): string {
  return (
    `{"app":"BENCHAPP","callid":${callid},"request_hash":null,"cli_name":"","cli_number":"+447700900123",` +
    `"date_started":"2026-11-22 10:00:00","number":"+442079460000","command":${JSON.stringify(command)},` +
    `"command_id":${id},"command_result":${JSON.stringify(result)},"command_error":${JSON.stringify(error)},` +
    `"call_status":"${status}","cdr_field":"","variables":{}}`
  );
}

/**
 * One front-desk call: [command just finished, its id, its result, status, the command /rt must answer ("" for the
 * end)]: welcome, menu, "3" (the address), menu again, "1" (sales dialout), then the terminal HANGUP request once
 * sales answered and the call was over.
 */
export const FRONT_DESK_CALL: readonly [string, number, string, string, string][] = [
  ['', 0, '', 'UP', 'play'], // -> welcome (1)
  ['play', 1, '0', 'UP', 'read'], // -> menu (2)
  ['read', 2, '3', 'UP', 'play'], // -> info (3)
  ['play', 3, '0', 'UP', 'read'], // count_visit, again -> menu (4)
  ['read', 4, '1', 'UP', 'dialout'], // -> sales (5)
  ['dialout', 5, '', 'HANGUP', ''], // sales answered, the call is over: hangup handler, end
];
