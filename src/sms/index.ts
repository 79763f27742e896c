export { smsEncoding, smsParts, GSM_SINGLE_PART, GSM_PART, UNICODE_SINGLE_PART, UNICODE_PART } from './encoding.js';
export type { SmsEncodingName, SmsEncodingResult } from './encoding.js';
export { SmsClient, CALLID_HEADER, DEFAULT_SMS_BASE_URL, DEFAULT_SMS_TIMEOUT_MS, optionsQuery } from './client.js';
export type { SmsClientOptions } from './client.js';
export {
  SmsError,
  SmsValidationError,
  SmsApiError,
  SmsNetworkError,
  SmsTimeoutError,
  SmsProtocolError,
} from './errors.js';
export type { SmsErrorKind } from './errors.js';
export { checkSendArgs, checkSmsOptions, checkListArgs, toSmsDatetime, USER_DATA_MAX } from './validate.js';
export type { SmsArgProblem } from './validate.js';
export { SMS_STATUSES, UNSET_DATETIME } from './types.js';
export type {
  Sms,
  SmsOptions,
  SmsStatus,
  SmsStatusChange,
  SmsType,
  SmsNature,
  SmsSendArgs,
  SmsListArgs,
} from './types.js';
