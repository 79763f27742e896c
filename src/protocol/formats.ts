/**
 * The parameter formats of the reference (telephony-api.md 2.3) as plain predicates.
 * Each returns null when the value is well formed, else a short reason. Phone numbers
 * are checked for shape here (E.164) and for plausibility with libphonenumber-js.
 */
import { isPossiblePhoneNumber } from 'libphonenumber-js';
import type { FormatName } from './commands.js';

export const E164 = /^\+[1-9][0-9]{1,14}$/;
const TTS = /^TTS\|([^|]+)\|([\s\S]*)$/;
const VOICE = /^[A-Za-z0-9_-]+$/;
export const UINT64_MAX = 18446744073709551615n;

export function checkE164(v: string): string | null {
  if (!E164.test(v)) return 'an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. +33123456789)';
  if (!isPossiblePhoneNumber(v)) return 'not a possible phone number for its country code';
  return null;
}

/** An rt_media string: an integer media id, `0` (none), or TTS|voice|text. */
export function checkRtMedia(v: string): string | null {
  if (/^[0-9]+$/.test(v)) return null;
  const m = TTS.exec(v);
  if (!m) return 'a media is an integer media id or TTS|<voice>|<text>';
  if (!VOICE.test(m[1]!)) return `"${m[1]}" is not a voice id (letters, digits, - and _, e.g. TTS_EN-GB_SERENA)`;
  if (m[2]!.trim() === '') return 'the TTS text is empty';
  return null;
}

export function checkCallid(v: string): string | null {
  if (!/^[0-9]{1,20}$/.test(v)) return 'a callid is a 64-bit unsigned integer (digits only)';
  if (BigInt(v) > UINT64_MAX) return 'a callid is at most 18446744073709551615';
  return null;
}

export function checkSmsSender(v: string): string | null {
  if (v === '') return null;
  if (!/^[a-zA-Z0-9 _-]{1,11}$/.test(v)) return 'a sender is 1 to 11 of a-z A-Z 0-9 space - _';
  if (!/[a-zA-Z]/.test(v)) return 'a sender needs at least one letter';
  return null;
}

export function checkDatetime(v: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(v);
  if (!m) return 'a datetime is YYYY-MM-DD HH:MM:SS (UTC)';
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const t = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
  if (t.getUTCMonth() !== mo! - 1 || t.getUTCDate() !== d! || h! > 23 || mi! > 59 || s! > 59)
    return 'not a real date and time';
  return null;
}

export function checkUrl(v: string): string | null {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'not a URL (e.g. https://example.com/sms-status)';
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'a webhook URL is http: or https:';
}

const CHECKS: Record<FormatName, (v: string) => string | null> = {
  rt_media: checkRtMedia,
  phone_number: checkE164,
  cli_phone_number: (v) => (v === 'BLOCKED' ? null : checkE164(v) && 'a caller id is an E.164 number or BLOCKED'),
  cdr_customer_field: (v) => (/^[a-zA-Z0-9]{0,32}$/.test(v) ? null : 'a cdr_field is at most 32 letters and digits'),
  rt_conference_id: (v) =>
    /^[a-zA-Z0-9_.:-]{1,64}$/.test(v) ? null : 'a room id is 1 to 64 of letters, digits, - _ . :',
  callid: checkCallid,
  locale: (v) =>
    v === '' || /^[a-z]{2}_[A-Z]{2}$/.test(v) ? null : 'a locale is ll_CC, e.g. en_GB (or empty for auto-detection)',
  dtmf_digits: (v) => (/^[0-9*#]{1,64}$/.test(v) ? null : 'DTMF digits are 0-9, * and # (1 to 64)'),
  pin_code: (v) => (/^[0-9]{0,10}$/.test(v) ? null : 'a PIN is digits only, 10 at most (empty: no PIN)'),
  base64_wav: (v) =>
    /^[A-Za-z0-9+/\s]+={0,2}$/.test(v) && v.length >= 8 ? null : 'audio_data is a base64-encoded WAV file',
  media_file: (v) => (v.trim() !== '' ? null : 'a media file name is not empty'),
  sms_sender: checkSmsSender,
  sms_user_data: (v) => ([...v].length <= 32 ? null : 'user_data is 32 characters at most'),
  url: checkUrl,
};

export function checkFormat(format: FormatName, value: string): string | null {
  return CHECKS[format](value);
}
