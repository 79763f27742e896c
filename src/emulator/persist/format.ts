/**
 * The journal's framing: one record a line, `<checksum> <json>\n`, where the checksum is
 * the first 8 hex digits of the SHA-256 of the JSON's UTF-8 bytes. JSON.stringify never
 * writes a raw newline, so a newline ends a record. The first record is the header
 * `{"journal":1,"generation":N}`: the journal holds the changes made after the data file
 * of that generation was written.
 *
 * Reading: a record cut short or damaged at the end of the file (a crash during the
 * write, before it was acknowledged) is a torn tail: the records before it count, the
 * rest is dropped. A damaged record followed by a good one is corruption: the file
 * cannot be trusted and the caller stops with its offset.
 */
import { createHash } from 'node:crypto';

export const JOURNAL_FORMAT = 1;

export function encodeRecord(value: unknown): string {
  const json = JSON.stringify(value);
  return `${checksum(json)} ${json}\n`;
}

export function headerRecord(generation: number): string {
  return encodeRecord({ journal: JOURNAL_FORMAT, generation });
}

export interface Scanned {
  /** Each good record and the byte offset where it starts. */
  records: { offset: number; value: unknown }[];
  /** A torn tail: where it starts and its length in bytes. */
  torn?: { offset: number; bytes: number };
}

export type ScanResult = { ok: true; scanned: Scanned } | { ok: false; offset: number; reason: string };

export function scanJournal(buf: Buffer): ScanResult {
  const records: Scanned['records'] = [];
  let bad: { offset: number; reason: string } | undefined;
  let offset = 0;
  while (offset < buf.length) {
    const nl = buf.indexOf(0x0a, offset);
    const end = nl < 0 ? buf.length : nl;
    const r =
      nl < 0 ? { ok: false as const, reason: 'the record has no end (no newline)' } : decode(buf.subarray(offset, end));
    if (r.ok && bad) return { ok: false, offset: bad.offset, reason: `${bad.reason}, and good records follow it` };
    if (r.ok) records.push({ offset, value: r.value });
    else bad ??= { offset, reason: r.reason };
    offset = end + 1;
  }
  return {
    ok: true,
    scanned: bad ? { records, torn: { offset: bad.offset, bytes: buf.length - bad.offset } } : { records },
  };
}

function decode(line: Buffer): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (line.length < 10 || line[8] !== 0x20) return { ok: false, reason: 'the record is not "<checksum> <json>"' };
  const json = line.subarray(9).toString('utf8');
  if (line.subarray(0, 8).toString('latin1') !== checksum(json))
    return { ok: false, reason: 'the record does not match its checksum' };
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch (err) {
    return { ok: false, reason: `the record is not JSON (${(err as Error).message})` };
  }
}

function checksum(json: string): string {
  return createHash('sha256').update(json, 'utf8').digest('hex').slice(0, 8);
}
