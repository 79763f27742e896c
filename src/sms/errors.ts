/**
 * What SmsClient throws. Every error is an SmsError; `kind` tells them apart without
 * instanceof (e.g. across package copies):
 * - 'validation': an argument was refused locally, nothing was sent;
 * - 'api':        the service answered with its error envelope (HTTP 4xx/5xx);
 * - 'network':    no HTTP answer at all (connection refused, reset, DNS, ...);
 * - 'timeout':    no complete answer within timeoutMs;
 * - 'protocol':   an answer that is not the service's JSON envelope.
 */
export type SmsErrorKind = 'validation' | 'api' | 'network' | 'timeout' | 'protocol';

export abstract class SmsError extends Error {
  abstract readonly kind: SmsErrorKind;
}

/** An argument failed the same checks the service makes; `param` names it (e.g. "to", "options.nature"). */
export class SmsValidationError extends SmsError {
  readonly kind = 'validation' as const;
  override readonly name = 'SmsValidationError';
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

/** The error envelope {"status":"error","data":{"code","message"}}. */
export class SmsApiError extends SmsError {
  readonly kind = 'api' as const;
  override readonly name = 'SmsApiError';
  constructor(
    /** HTTP status */
    readonly status: number,
    /** data.code of the envelope */
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class SmsNetworkError extends SmsError {
  readonly kind = 'network' as const;
  override readonly name = 'SmsNetworkError';
  constructor(
    message: string,
    /** The system error code when there is one (ECONNREFUSED, ECONNRESET, ENOTFOUND, ...). */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class SmsTimeoutError extends SmsError {
  readonly kind = 'timeout' as const;
  override readonly name = 'SmsTimeoutError';
  constructor(
    message: string,
    readonly timeoutMs: number,
  ) {
    super(message);
  }
}

/** A reply that is not the service's envelope: not JSON, wrong shape, or unexpected data. */
export class SmsProtocolError extends SmsError {
  readonly kind = 'protocol' as const;
  override readonly name = 'SmsProtocolError';
  constructor(
    message: string,
    /** HTTP status */
    readonly status: number,
    /** The start of the body (500 characters at most). */
    readonly body: string,
  ) {
    super(message);
  }
}
