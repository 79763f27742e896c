/**
 * What a failed fetch says, plainly: the system error code under its causes, and its words (the SMS and JSON-RPC
 * clients).
 */

/**
 * The first system error code (ECONNREFUSED...) among the error and its causes; for an AggregateError (happy eyeballs
 * tried several addresses), the first one's.
 */
export function systemCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors[0]) {
      const c = (errors[0] as { code?: unknown }).code;
      if (typeof c === 'string') return c;
    }
  }
  return undefined;
}

export function describeCode(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the server';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return 'network error';
  }
}
