/**
 * Error codes of the emulator's SMS REST envelope (`{"status":"error","data":{"code",
 * "message"}}`) and of its JSON-RPC application errors. The service does not publish
 * its codes; these are ours (docs/emulator.md), 22 for authentication as in JSON-RPC.
 */
export const ERR = {
  INTERNAL: 1,
  /** The change could not be written to the data file (--data). */
  STORAGE: 2,
  /** The request itself is malformed: body not JSON, wrong Content-Type, not an object. */
  MALFORMED: 10,
  /** A parameter is missing, of the wrong type, or badly formed. */
  INVALID_PARAM: 11,
  NOT_FOUND: 20,
  METHOD_NOT_ALLOWED: 21,
  AUTH: 22,
  TOO_LARGE: 23,
  /** As many calls are running as the emulator runs at once. */
  BUSY: 24,
} as const;

/** Maps a Fastify / body-parser error to an HTTP status, an error code and a message. */
export function fromFastifyError(err: { statusCode?: number; code?: string; message: string }): {
  status: number;
  code: number;
  message: string;
} {
  const status = err.statusCode ?? 500;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413)
    return { status: 413, code: ERR.TOO_LARGE, message: 'the request body is too large' };
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415)
    return {
      status: 415,
      code: ERR.MALFORMED,
      message: 'unsupported Content-Type: send JSON with Content-Type: application/json',
    };
  if (err.code === 'EMU_TOO_DEEP') return { status: 400, code: ERR.MALFORMED, message: err.message };
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return { status: 400, code: ERR.MALFORMED, message: 'the body is empty: send a JSON object' };
  if (status === 400)
    return { status: 400, code: ERR.MALFORMED, message: `the body is not valid JSON: ${err.message}` };
  if (status >= 400 && status < 500) return { status, code: ERR.MALFORMED, message: err.message };
  return { status: 500, code: ERR.INTERNAL, message: 'internal error of the emulator' };
}
