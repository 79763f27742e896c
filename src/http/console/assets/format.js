// Times, durations and diagnostics as shown.

/** Epoch ms of an ISO string or a number; NaN when neither. */
export function ms(t) {
  if (typeof t === 'number') return t;
  if (typeof t === 'string') return Date.parse(t);
  return NaN;
}

/** "14:03:07" (local time), with the date when not today. */
export function clock(t) {
  const v = ms(t);
  if (!Number.isFinite(v)) return '—';
  const d = new Date(v);
  const time = d.toLocaleTimeString('en-GB', { hour12: false });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toISOString().slice(0, 10)} ${time}`;
}

/** "850 ms", "12.3 s", "4 min 05 s". */
export function duration(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60000) return `${(n / 1000).toFixed(1)} s`;
  const m = Math.floor(n / 60000);
  return `${m} min ${String(Math.floor((n % 60000) / 1000)).padStart(2, '0')} s`;
}

/** How long ago. */
export function ago(t) {
  const v = ms(t);
  if (!Number.isFinite(v)) return '—';
  return `${duration(Math.max(0, Date.now() - v))} ago`;
}

/** A diagnostic's place: file:line:col. */
export const place = (d) => `${d.file}:${d.line}:${d.column}`;

/** A short version (12 hex digits are shown whole: they are what the API takes). */
export const ver = (v) => (v == null ? '—' : String(v));
