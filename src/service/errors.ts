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
export type ServiceTransportCode = 'SERVICE_UNREACHABLE' | 'SERVICE_TIMEOUT' | 'SERVICE_HTTP' | 'SERVICE_BAD_REPLY' | 'SERVICE_BAD_ARGS';

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
    readonly details: { status?: number; body?: string; data?: unknown; cause?: unknown } = {},
  ) {
    super(message, details.cause !== undefined ? { cause: details.cause } : undefined);
  }

  /** The service answered with a JSON-RPC error object (it was reached and refused). */
  get fromService(): boolean {
    return typeof this.code === 'number';
  }

  /** An authentication failure (code 22). */
  get isAuth(): boolean {
    return this.code === AUTH_FAILED;
  }
}
