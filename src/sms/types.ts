/**
 * The SMS REST API v1.1 resources (telephony-api.md 2.1, 2.2; protocol-notes.md "SMS REST
 * (v1.1)"). Field names are the wire names.
 */
import type { SmsEncodingName } from './encoding.js';

export type SmsType = 'IN' | 'OUT';
export type SmsNature = 'ALERTING' | 'MARKETING';
/** CREATED -> PENDING -> SENT -> REMOTE_QUEUED -> RECEIVED; failures ERROR, FAILED, EXPIRED. */
export type SmsStatus = 'CREATED' | 'PENDING' | 'SENT' | 'REMOTE_QUEUED' | 'RECEIVED' | 'ERROR' | 'FAILED' | 'EXPIRED';

export const SMS_STATUSES: readonly SmsStatus[] = [
  'CREATED',
  'PENDING',
  'SENT',
  'REMOTE_QUEUED',
  'RECEIVED',
  'ERROR',
  'FAILED',
  'EXPIRED',
];

/** A datetime field that was never set reads this. */
export const UNSET_DATETIME = '0000-00-00 00:00:00';

/** SMS.Options: every key optional; omit the object (or pass null) for defaults. */
export interface SmsOptions {
  /** Force the encoding; forcing GSM transliterates what GSM lacks (ê -> e). */
  force_encoding?: SmsEncodingName;
  nature?: SmsNature;
  /** Short free text (32 characters at most) that comes back on the SMS object. */
  user_data?: string;
  flash_message?: boolean;
  /** Status notifications go to this http(s) URL. */
  webhook?: { endpoint: string };
}

export interface SmsStatusChange {
  old_status: SmsStatus;
  new_status: SmsStatus;
  /** datetime, UTC */
  updated_at: string;
}

/** One SMS, as GET /sms/<hash> and GET /sms return it. */
export interface Sms {
  type: SmsType;
  /** 8 upper-case letters and digits, e.g. 8242D945 */
  hash: string;
  from: string;
  to: string;
  /** The message text (the request calls it `body`). */
  text: string;
  options: SmsOptions | null;
  encoding: SmsEncodingName;
  user_data: string | null;
  /** Cost, as a decimal string (e.g. "0.0450"). */
  b_customer_debit: string;
  network: string | null;
  status: SmsStatus;
  status_error: string | null;
  /** Number of billed parts. */
  parts: number;
  nature: SmsNature | null;
  /** datetime fields: YYYY-MM-DD HH:MM:SS in UTC, or UNSET_DATETIME. */
  date_creation: string;
  date_update: string;
  date_sent: string;
  date_received: string;
  status_history: SmsStatusChange[];
}

/** Arguments of POST /sms and GET /sms/send. */
export interface SmsSendArgs {
  /** Sender: '' for a shared short code, else 1 to 11 of a-z A-Z 0-9 space - _ with a letter. */
  from: string;
  /** Recipient, E.164 (+CCNSN). */
  to: string;
  /** Message text, not empty. */
  body: string;
  options?: SmsOptions | null;
}

/** Arguments of GET /sms: all three are required. Dates are UTC (a Date is formatted for you). */
export interface SmsListArgs {
  type: SmsType;
  from: string | Date;
  to: string | Date;
}
