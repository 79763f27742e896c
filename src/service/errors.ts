/**
 * What ServiceClient throws: one class, ServiceError, for every failure of a JSON-RPC call.
 * `code` is the service's JSON-RPC error code (a number: 22 authentication, 20 not found,
 * -32602 invalid params...) when the service answered with an error object, or a code of
 * our own (a string) when no JSON-RPC answer came back:
 * - 'SERVICE_UNREACHABLE': no HTTP answer (connection refused or reset, host not found);
 * - 'SERVICE_TIMEOUT':     no complete answer within the client's timeout;
 * - 'SERVICE_HTTP':        an HTTP status other than 200 without a JSON-RPC error in it (a 5xx of a proxy);
 * - 'SERVICE_BAD_REPLY':   an answer that is not JSON-RPC 2.0 (not JSON, no result, another id);
 * - 'SERVICE_BAD_ARGS':    an argument refused locally, nothing was sent.
 */
export type ServiceTransportCode =
  'SERVICE_UNREACHABLE' | 'SERVICE_TIMEOUT' | 'SERVICE_HTTP' | 'SERVICE_BAD_REPLY' | 'SERVICE_BAD_ARGS';

/** System errors of a connection that was never made: nothing was sent. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** The JSON-RPC error code of an authentication failure (a wrong login or password). */
export const AUTH_FAILED = 22;

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    /** The JSON-RPC error code, or our own code when the service gave none. */
    readonly code: number | ServiceTransportCode,
    message: string,
    /** The method called, e.g. "calls.realtime". */
    readonly method: string,
    readonly details: { status?: number; body?: string; data?: unknown; cause?: unknown; system?: string } = {},
  ) {
    super(message, details.cause !== undefined ? { cause: details.cause } : undefined);
  }

  /** The service answered with a JSON-RPC error object (it was reached and refused). */
  get fromService(): boolean {
    return typeof this.code === 'number';
  }

  /**
   * The request surely never reached the service: refused locally (SERVICE_BAD_ARGS), or no
   * connection was made (refused, host not found, no route). Any other failure without a
   * JSON-RPC answer (a timeout, a connection cut, an HTTP error, an answer that is not
   * JSON-RPC or not what the method returns) may come after the service acted on it: a call
   * may have been placed.
   */
  get unsent(): boolean {
    if (this.code === 'SERVICE_BAD_ARGS') return true;
    return (
      this.code === 'SERVICE_UNREACHABLE' && this.details.system !== undefined && NOT_CONNECTED.has(this.details.system)
    );
  }

  /** An authentication failure (code 22). */
  get isAuth(): boolean {
    return this.code === AUTH_FAILED;
  }
}
