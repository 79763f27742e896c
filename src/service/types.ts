/**
 * The objects of the service's JSON-RPC API v1.1 (the CALLR API, https://www.callr.com/docs/;
 * protocol-notes.md "Outbound calls and applications (JSON-RPC)"). Field names are the
 * wire names; objects are typed with the fields callscript reads and keep the others.
 */
export type { Sms, SmsOptions, SmsType } from '../sms/types.js';

/**
 * The params of a REALTIME10 application: where the service POSTs a call's requests, and the Basic credentials it
 * sends.
 */
export interface RealtimeAppParams {
  url: string;
  login: string;
  password: string;
  data_format: 'JSON';
}

/** An application, as apps.create, apps.get and apps.get_list return it. */
export interface App {
  /** The application's hash (e.g. "A1B2C3D4"): `app` of its calls' requests. */
  hash: string;
  name: string;
  /** "REALTIME10" for real-time applications. */
  package?: string;
  /** Its params. */
  p: Partial<RealtimeAppParams> & Record<string, unknown>;
  date_creation?: string;
  date_update?: string;
  [field: string]: unknown;
}

/** calls.realtime's target: the number called (E.164) and how long it rings, 5 to 300 s. */
export interface CallTarget {
  number: string;
  timeout: number;
}

/** calls.realtime's options. */
export interface RealtimeCallOptions {
  /** Up to 32 letters and digits: tags the call's records, and comes back as the requests' `cdr_field`. */
  cdr_field?: string;
  /** The caller id shown: an E.164 number of the account, or "BLOCKED". */
  cli?: string;
}

/** sms.get_list's direction. */
export type SmsDirection = 'IN' | 'OUT';
