/**
 * A transcript as text, for the terminal (`callscript call`). What the server answered and what the
 * caller script says are shown with their control characters escaped (src/terminal/printable.ts).
 */
import { printable } from '../../terminal/printable.js';
import type { CommandEntry, SmsNote, Transcript } from './transcript.js';

export interface FormatOptions {
  /** Print params in full (long media are cut at 100 characters otherwise). */
  full?: boolean;
}

export function formatTranscript(t: Transcript, opts: FormatOptions = {}): string {
  const out: string[] = [];
  const route =
    t.direction === 'inbound'
      ? `${t.from || '(withheld)'} -> ${t.to}`
      : `to ${t.to}${t.from ? ` (cli ${t.from})` : ''}`;
  out.push(`call ${t.id}  ${t.direction}  ${route}  caller: ${t.caller}`);
  out.push(
    `  ${t.url}${t.app ? `  app ${t.app}` : ''}  callid ${t.callid}  ` +
      `started ${t.date_started}${t.request_hash ? `  request_hash ${t.request_hash}` : ''}`,
  );
  out.push('');
  // an SMS sent while the server answered request n is shown before the command of that reply
  const sms = t.sms ?? [];
  const shown = new Set<SmsNote>();
  const smsOf = (request: number) =>
    sms.filter((s) => s.request === request && !shown.has(s)).flatMap((s) => (shown.add(s), smsLines(s, opts)));
  for (const c of t.commands) out.push(...smsOf(c.request), ...command(c, opts));
  out.push(...sms.filter((s) => !shown.has(s)).flatMap((s) => smsLines(s, opts)));
  if (t.final) {
    const f = t.final;
    const res = f.command_result ? ` result ${JSON.stringify(f.command_result)}` : '';
    const reply = f.http_status === undefined ? 'no reply' : `HTTP ${f.http_status}`;
    out.push(
      `     ${clock(t.duration_ms)}  ${f.call_status}  (command ${f.command || '""'}, ` +
        `command_id ${f.command_id}${res}) -> ${reply}`,
    );
  }
  out.push('');
  out.push(`ended by ${t.ended_by ?? '?'}: ${t.end_reason ?? ''}`);
  for (const v of t.violations) out.push(`  violation  request ${v.request}  ${v.code}  ${v.field}: ${v.message}`);
  for (const w of t.warnings)
    out.push(`  warning    request ${w.request}  ${w.code}${w.field ? `  ${w.field}` : ''}: ${w.message}`);
  for (const u of t.unused_actions) out.push(`  unused action  ${u}`);
  const n = (x: number, w: string) => `${x} ${w}${x === 1 ? '' : 's'}`;
  out.push(
    `${clock(t.duration_ms)} · ${n(t.requests, 'request')} · ${n(t.commands.length, 'command')} ` +
      `· ${n(t.violations.length, 'violation')} · ${n(t.warnings.length, 'warning')}`,
  );
  // each line escaped whole: a value's line feed shows as \x0a, it starts no line of its own
  return out.map(printable).join('\n');
}

function smsLines(s: SmsNote, opts: FormatOptions): string[] {
  const text = !opts.full && s.text.length > 100 ? s.text.slice(0, 99) + '…' : s.text;
  return [
    `     sms ${s.hash}  ${s.from || '(short code)'} -> ${s.to}  ${s.parts} ` +
      `part${s.parts === 1 ? '' : 's'} ${s.encoding}  (sent while answering request ${s.request})`,
    `       ${JSON.stringify(text)}`,
  ];
}

function command(c: CommandEntry, opts: FormatOptions): string[] {
  const tag = c.status === 'done' ? '' : `  [${c.status}]`;
  const lines = [
    `${String(c.n).padStart(3)}  ${clock(c.at_ms)}  ${c.command || '?'} #${c.command_id}  ` +
      `(reply ${c.reply_ms} ms)${tag}`,
  ];
  const ps = Object.entries(c.params).map(([k, v]) => `${k}: ${value(k, v, opts)}`);
  if (ps.length > 0) lines.push(`       ${ps.join('  ')}`);
  if (c.spellings) lines.push(`       older spelling: ${c.spellings.join(', ')}`);
  if (c.status !== 'refused') {
    const what = c.error ? `error ${c.error}` : c.result === '' ? '""' : c.result;
    lines.push(`       -> ${what}   ${c.caller}`);
  } else lines.push(`       ${c.caller}`);
  return lines;
}

function value(key: string, v: unknown, opts: FormatOptions): string {
  if (key === 'targets' && Array.isArray(v))
    return v.map((t: { number?: unknown; timeout?: unknown }) => `${t?.number} (${t?.timeout ?? 30} s)`).join(', ');
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return !opts.full && s.length > 100 ? s.slice(0, 99) + '…' : s;
}

/** m:ss.s */
export function clock(ms: number): string {
  const m = Math.floor(ms / 60000);
  const s = ((ms % 60000) / 1000).toFixed(1).padStart(4, '0');
  return `${m}:${s}`;
}
