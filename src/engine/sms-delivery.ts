/**
 * Delivery status of the SMS a call's flow sent (docs/webhooks.md), as pure data: the note
 * the call history writes when an sms step succeeds (which call, which step, when), the
 * delivery reports the service POSTs (sms.mt.status_update: the SMS's status, its error,
 * the event's time), and the view of an SMS the admin API shows, made of both.
 *
 * An SMS's status is CREATED (the service's first status: its API accepted it) until a
 * report comes; then the status of the latest report, by the event's time (reports may
 * arrive out of order, a retried one late), ties broken by the order of the lifecycle
 * CREATED, PENDING, SENT, REMOTE_QUEUED, RECEIVED, then the failures.
 */
import type { PathEntry } from './history.js';

/** The service's SMS hash: 8 upper-case letters and digits. */
export const SMS_HASH = /^[A-Z0-9]{8}$/;

/** The service's SMS statuses, in lifecycle order (failures last). */
export const SMS_STATUSES = [
  'CREATED',
  'PENDING',
  'SENT',
  'REMOTE_QUEUED',
  'RECEIVED',
  'ERROR',
  'FAILED',
  'EXPIRED',
] as const;

/** Reports kept per SMS (an SMS has about 5; more would be a misbehaving sender). */
export const MAX_REPORTS = 32;

export interface SmsSent {
  callid: string;
  step: string;
  /** Epoch ms. */
  at: number;
}

export interface SmsReport {
  status: string;
  /** The service's status_error ("" when none). */
  error: string;
  /** The event's time (event_at), epoch ms. */
  at: number;
  /** The webhook event id. */
  event: string;
}

export interface SmsDelivery {
  hash: string;
  /** The sms step that sent it. */
  step: string;
  status: string;
  /** The status_error of the latest report, when it has one. */
  error?: string;
  /** ISO 8601: when the status was reached. */
  updatedAt: string;
  /** Every status, oldest first: CREATED, then the reports. */
  history: { status: string; at: string; error?: string }[];
}

/** An SMS a call sent, as its path shows it. */
export interface SentSms {
  hash: string;
  step: string;
  at: number;
}

export const sentText = (s: SmsSent): string => JSON.stringify(s);
export const reportText = (r: SmsReport): string => JSON.stringify(r);

/**
 * The SMS a path sent: the sms effects that succeeded with a hash (a sensitive step's is masked: left out), oldest
 * first.
 */
export function sentSms(path: readonly PathEntry[]): SentSms[] {
  const out: SentSms[] = [];
  for (const e of path) {
    for (const x of e.effects ?? []) {
      if (x.kind === 'sms' && x.outcome === 'ok' && typeof x.value === 'string' && SMS_HASH.test(x.value))
        out.push({ hash: x.value, step: x.step, at: e.at });
    }
  }
  return out;
}

/** The stored note of who sent an SMS, or undefined when it is not one. */
export function parseSent(text: string | undefined): SmsSent | undefined {
  const v = parse(text);
  return v && typeof v.callid === 'string' && typeof v.step === 'string' && typeof v.at === 'number'
    ? (v as unknown as SmsSent)
    : undefined;
}

/** A stored report, or undefined when it is not one. */
export function parseReport(text: string): SmsReport | undefined {
  const v = parse(text);
  return v &&
    typeof v.status === 'string' &&
    typeof v.error === 'string' &&
    typeof v.at === 'number' &&
    typeof v.event === 'string'
    ? (v as unknown as SmsReport)
    : undefined;
}

const rank = (status: string): number => {
  const i = (SMS_STATUSES as readonly string[]).indexOf(status);
  return i < 0 ? SMS_STATUSES.length : i;
};

/**
 * The view of an SMS a call sent, from what the store holds for it (undefined: nothing, e.g. no report yet and the note
 * expired).
 */
export function deliveryView(sms: SentSms, stored: { sent?: string; reports: string[] } | undefined): SmsDelivery {
  const reports = (stored?.reports ?? [])
    .map(parseReport)
    .filter((r): r is SmsReport => r !== undefined)
    .sort((a, b) => a.at - b.at || rank(a.status) - rank(b.status));
  const history: SmsDelivery['history'] = [
    { status: 'CREATED', at: iso(sms.at) },
    ...reports.map((r) => ({ status: r.status, at: iso(r.at), ...(r.error !== '' ? { error: r.error } : {}) })),
  ];
  const last = history[history.length - 1]!;
  return {
    hash: sms.hash,
    step: sms.step,
    status: last.status,
    ...(last.error !== undefined ? { error: last.error } : {}),
    updatedAt: last.at,
    history,
  };
}

function parse(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
