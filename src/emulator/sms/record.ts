/**
 * SMS objects: how an accepted SMS is stored, how its status moves on with time, and the
 * public SMS object of the API (the fields protocol-notes.md lists, in that order).
 *
 * An outbound SMS gets its whole status timeline when it is created (CREATED, then
 * PENDING, SENT, REMOTE_QUEUED, RECEIVED after the configured delays); reading it shows
 * the steps whose time has come. A test can move it to a failure status through the
 * control API (the steps still to come are dropped).
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { smsEncoding, type SmsEncodingName } from '../../sms/encoding.js';
import { formatDatetime, ZERO_DATE } from '../time.js';
import type { SmsOptions, SmsToSend } from './validate.js';

export const DELIVERY = ['CREATED', 'PENDING', 'SENT', 'REMOTE_QUEUED', 'RECEIVED'] as const;
export const FAILURES = ['ERROR', 'FAILED', 'EXPIRED'] as const;
export type SmsStatus = (typeof DELIVERY)[number] | (typeof FAILURES)[number];

export interface TimelineStep {
  status: SmsStatus;
  at: number;
  error?: string;
}

export interface SmsRecord {
  type: 'IN' | 'OUT';
  hash: string;
  from: string;
  to: string;
  text: string;
  options: SmsOptions | null;
  encoding: SmsEncodingName;
  parts: number;
  user_data: string;
  b_customer_debit: string;
  network: string;
  nature: string;
  created: number;
  timeline: TimelineStep[];
}

export interface SmsSettings {
  /** Replaces %STOPNUM% in bodies sent with a custom sender. */
  stopNumber: string;
  /** The sender an SMS sent with `from: ""` shows. */
  sharedShortCode: string;
  /** Price of one part, e.g. 0.05. */
  pricePerPart: number;
  /** Delays from creation to PENDING, SENT, REMOTE_QUEUED, RECEIVED, in ms. */
  deliveryDelaysMs: readonly [number, number, number, number];
}

export const DEFAULT_SMS_SETTINGS: SmsSettings = {
  stopNumber: '36180',
  sharedShortCode: '38100',
  pricePerPart: 0.05,
  deliveryDelaysMs: [0, 1000, 2000, 3000],
};

/** Mobile networks (MCC+MNC) shown for a few countries; others show "". */
const NETWORKS: Record<string, string> = {
  FR: '20801',
  GB: '23415',
  US: '310260',
  DE: '26201',
  ES: '21407',
  IT: '22201',
  BE: '20610',
  CH: '22801',
  NL: '20408',
  CA: '302720',
};

export function newOutboundSms(hash: string, sms: SmsToSend, now: number, s: SmsSettings): SmsRecord {
  const custom = sms.from !== '';
  const body = custom ? sms.body.replaceAll('%STOPNUM%', s.stopNumber) : sms.body;
  const enc = smsEncoding(body, sms.options?.force_encoding);
  const country = parsePhoneNumberFromString(sms.to)?.country;
  const [pending, sent, queued, received] = s.deliveryDelaysMs;
  return {
    type: 'OUT',
    hash,
    from: custom ? sms.from : s.sharedShortCode,
    to: sms.to,
    text: enc.text,
    options: sms.options,
    encoding: enc.encoding,
    parts: enc.parts,
    user_data: sms.options?.user_data ?? '',
    b_customer_debit: (enc.parts * s.pricePerPart).toFixed(4),
    network: (country && NETWORKS[country]) ?? '',
    nature: sms.options?.nature ?? 'ALERTING',
    created: now,
    timeline: [
      { status: 'CREATED', at: now },
      { status: 'PENDING', at: now + pending },
      { status: 'SENT', at: now + sent },
      { status: 'REMOTE_QUEUED', at: now + queued },
      { status: 'RECEIVED', at: now + received },
    ],
  };
}

/** An SMS received by the account (type IN), e.g. a reply to one it sent. */
export function newInboundSms(hash: string, from: string, to: string, body: string, now: number): SmsRecord {
  const enc = smsEncoding(body);
  const country = parsePhoneNumberFromString(from)?.country;
  return {
    type: 'IN',
    hash,
    from,
    to,
    text: body,
    options: null,
    encoding: enc.encoding,
    parts: enc.parts,
    user_data: '',
    b_customer_debit: '0.0000',
    network: (country && NETWORKS[country]) ?? '',
    nature: '',
    created: now,
    timeline: [
      { status: 'CREATED', at: now },
      { status: 'RECEIVED', at: now },
    ],
  };
}

/** Moves the SMS to `status` now: later steps are dropped. */
export function forceStatus(r: SmsRecord, status: SmsStatus, error: string, now: number): void {
  r.timeline = r.timeline.filter((t) => t.at <= now);
  r.timeline.push(error ? { status, at: now, error } : { status, at: now });
}

/** The public SMS object as of `now`; with `until`, as of that step of its timeline (a webhook's data). */
export function smsObject(r: SmsRecord, now: number, until?: TimelineStep): Record<string, unknown> {
  const upTo = until ? r.timeline.indexOf(until) : -1;
  const done = upTo >= 0 ? r.timeline.slice(0, upTo + 1) : r.timeline.filter((t) => t.at <= now);
  const last = done[done.length - 1] ?? r.timeline[0]!;
  const when = (s: SmsStatus) => done.find((t) => t.status === s);
  const history = done
    .slice(1)
    .map((t, i) => ({ old_status: done[i]!.status, new_status: t.status, updated_at: formatDatetime(t.at) }));
  const sent = when('SENT');
  const received = when('RECEIVED');
  return {
    type: r.type,
    hash: r.hash,
    from: r.from,
    to: r.to,
    text: r.text,
    options: r.options,
    encoding: r.encoding,
    user_data: r.user_data,
    b_customer_debit: r.b_customer_debit,
    network: r.network,
    status: last.status,
    status_error: last.error ?? '',
    parts: r.parts,
    nature: r.nature,
    date_creation: formatDatetime(r.created),
    date_update: formatDatetime(last.at),
    date_sent: sent ? formatDatetime(sent.at) : ZERO_DATE,
    date_received: received ? formatDatetime(received.at) : ZERO_DATE,
    status_history: history,
  };
}
