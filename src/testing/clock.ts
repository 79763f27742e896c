/**
 * The call's clock as the tools take it from a person (`simulate --now`): an ISO 8601 time
 * with its zone (`2026-11-23T10:00:00Z`, `2026-11-23T11:00:00+01:00`), a date alone (its
 * midnight UTC), or epoch milliseconds. A time without a zone is refused (the machine's zone
 * would decide it), as is anything Date.parse would guess at.
 */

const ISO = /^(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.\d{1,9})?)?(Z|[+-]\d\d:\d\d))?$/;

/** Epoch ms of `text`; throws an Error naming `what` and the forms it takes. */
export function parseClock(text: string, what = 'the time'): number {
  const s = text.trim();
  const shown = JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}...` : s);
  const bad = () =>
    new Error(
      `${what} ${shown} is not a time: write ISO 8601 with its zone (2026-11-23T10:00:00Z, ` +
        `2026-11-23T11:00:00+01:00), a date (2026-11-23, midnight UTC) or epoch milliseconds`,
    );
  let t: number;
  if (/^\d{1,15}$/.test(s)) t = Number(s);
  else {
    const m = ISO.exec(s);
    if (!m || (m[4] !== undefined && m[7] === undefined)) throw bad();
    const [, y, mo, d, h, mi, sec] = m;
    // Date.parse rolls 2026-02-31 over to March: the fields must be what they say
    if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) throw bad();
    if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(sec ?? 0) > 59)) throw bad();
    t = Date.parse(m[4] === undefined ? `${s}T00:00:00Z` : s);
    const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
    if (day.getUTCDate() !== Number(d)) throw bad();
  }
  if (!Number.isFinite(t) || t < 0 || t > Date.UTC(9999, 11, 31)) throw bad();
  return t;
}
