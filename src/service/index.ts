export { ServiceClient, serviceUrl, DEFAULT_API_URL, JSON_RPC_PATH, DEFAULT_SERVICE_TIMEOUT_MS } from './jsonrpc.js';
export type { ServiceClientOptions } from './jsonrpc.js';
export { ServiceError, AUTH_FAILED } from './errors.js';
export type { ServiceTransportCode } from './errors.js';
export type {
  App,
  RealtimeAppParams,
  CallTarget,
  RealtimeCallOptions,
  SmsDirection,
  Sms,
  SmsOptions,
  SmsType,
} from './types.js';
export { checkOutboundRequest, checkVars, OUTBOUND_LIMITS, RING_TIMEOUT_S } from './outbound-request.js';
export type { OutboundRequest, OutboundVars } from './outbound-request.js';
