/**
 * How `callscript calls` and `callscript trace` print what the admin API answers
 * (docs/admin.md "Calls"): a table of calls, and a call's path as a timeline. Pure text
 * functions of the API's JSON. What a call holds comes from callers, flows and the store:
 * its control characters are shown escaped (src/terminal/printable.ts).
 */
import type { FinishedRow, PathEntry as Entry } from '../engine/history.js';
import { printable } from '../terminal/printable.js';

export type { FinishedRow };

export interface LiveRow {
  callid: string;
  flow: string;
  version: string;
  step: string;
  started: string;
  lastSeen: string | null;
  commands: number;
}

interface SmsRow {
  hash: string;
  step: string;
  status: string;
  error?: string;
  updatedAt: string;
  history: { status: string; at: string; error?: string }[];
}

/** GET /admin/calls/:callid: a live call or a finished one. */
export interface CallDetail {
  callid: string;
  status: 'live' | 'finished';
  flow: string;
  version: string;
  started: string | null;
  commands: number | null;
  vars: Record<string, unknown>;
  path: Entry[];
  /** Entries dropped from the path's start (history.max_path, max_path_bytes); absent from servers before it. */
  dropped?: number;
  /** The cursor of the path's next page (GET /admin/calls/:callid/path), null at its end. */
  pathNext?: string | null;
  /** The SMS the call sent and their delivery status (docs/webhooks.md); absent from servers before it. */
  sms?: SmsRow[];
  // live
  step?: string;
  lastSeen?: string | null;
  // finished
  ended?: string;
  durationMs?: number;
  outcome?: string;
  /** The code of the engine error that ended the flow, when one did. */
  error?: string;
  callStatus?: string;
  lastStep?: string;
}

/** 2026-11-25T10:11:18.123Z → 2026-11-25 10:11:18 (UTC). */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? `${m[1]} ${m[2]}` : iso;
}

/** 850 → 850ms, 12345 → 12.3s, 65000 → 1m05s, 3723000 → 1h02m03s. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m${pad(s % 60)}s`;
}

/** Columns padded to their widest cell, two spaces apart (the last one not padded); cells escaped. */
export function table(head: string[], cells: string[][]): string {
  const rows = cells.map((r) => r.map(printable));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows]
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

/** The live calls as a table: callid, flow, step, started, duration (until `now`). */
export function liveTable(calls: readonly LiveRow[], now: number): string {
  if (calls.length === 0) return 'no live calls';
  return table(
    ['CALLID', 'FLOW', 'STEP', 'STARTED (UTC)', 'DURATION'],
    calls.map((c) => [c.callid, c.flow, c.step, shortTime(c.started), duration(now - Date.parse(c.started))]),
  );
}

/** The finished calls as a table: callid, flow, outcome, started, duration. */
export function finishedTable(calls: readonly FinishedRow[]): string {
  if (calls.length === 0) return 'no finished calls';
  return table(
    ['CALLID', 'FLOW', 'OUTCOME', 'STARTED (UTC)', 'DURATION'],
    calls.map((c) => [c.callid, c.flow, c.outcome, shortTime(c.started), duration(c.durationMs)]),
  );
}

/** Longest params text on a timeline line. */
const PARAMS_CHARS = 80;

function paramsText(p: Record<string, unknown>): string {
  const t = JSON.stringify(p);
  return t === '{}' ? '' : t.length > PARAMS_CHARS ? `${t.slice(0, PARAMS_CHARS - 1)}…` : t;
}

/**
 * A call and its path as a timeline: +ms from the call's start, steps, what was reported and sent, transitions,
 * effects. Each line is escaped whole: a value's line feed shows as \x0a, it starts no line of its own.
 */
export function traceText(c: CallDetail): string {
  const lines: string[] = [];
  const head =
    c.status === 'live'
      ? `live at step ${c.step ?? '-'}`
      : `finished: ${c.outcome ?? '-'}${c.error ? ` ${c.error}` : ''} (${c.callStatus ?? '-'}), last step ` +
        `${c.lastStep ?? '-'}`;
  lines.push(`call ${c.callid}  ${c.flow} ${c.version}  ${head}`);
  const took =
    c.status === 'live'
      ? c.lastSeen
        ? `last seen ${shortTime(c.lastSeen)}`
        : 'served by another instance lately'
      : `${duration(c.durationMs ?? NaN)}`;
  lines.push(`started ${shortTime(c.started)} UTC, ${took}, ${c.commands ?? '-'} commands`);
  if (Object.keys(c.vars).length > 0) lines.push(`vars ${JSON.stringify(c.vars)}`);
  if (c.path.length === 0) {
    lines.push('no path recorded (the call history is off, or the call started before it was on)');
    return lines.map(printable).join('\n');
  }
  const started = c.started ? Date.parse(c.started) : NaN;
  const origin = Math.min(c.path[0]!.at, Number.isFinite(started) ? started : Infinity);
  const offsets = c.path.map((e) => `+${Math.round(e.at - origin)}ms`);
  const w = Math.max(...offsets.map((o) => o.length));
  lines.push('');
  if (c.dropped) lines.push(`(the first ${c.dropped} requests are not kept: history.max_path, max_path_bytes)`);
  c.path.forEach((e, i) => {
    const move = `${e.from ?? '(new call)'} → ${e.step ?? '-'}`;
    const got =
      e.command === '' ? '' : `got ${e.command} ${JSON.stringify(e.result)}${e.error ? ` error ${e.error}` : ''}`;
    const sent = e.reply
      ? `sent ${e.reply.command}${paramsText(e.reply.params) ? ` ${paramsText(e.reply.params)}` : ''}`
      : `(${e.outcome}: nothing new sent)`;
    const parts = [offsets[i]!.padStart(w), move, got, sent].filter((p) => p !== '');
    if (e.transitions.length > 0) parts.push(`via ${e.transitions.join(', ')}`);
    let line = parts.join('  ');
    if (e.late) line += '  (late: a fallback was answered meanwhile)';
    if (e.replays || e.refused) line += `  (then retried ${e.replays ?? 0}×, refused ${e.refused ?? 0}×)`;
    line += `  [${e.ms}ms${e.traceId ? ` trace ${e.traceId}` : ''}]`;
    lines.push(line);
    for (const x of e.effects) {
      // a queue step's operation: its queue and op, and a poll's answer with the caller's wait so far
      const q = x.queue;
      const what = q ? `queue ${q.name} ${q.op}` : x.kind;
      const got =
        q && x.outcome === 'ok' ? (x.value ?? 'ok') : `${x.outcome}${x.value !== undefined ? ` ${x.value}` : ''}`;
      const waited = q?.waited !== undefined && q.op === 'poll' ? `, waited ${q.waited} s` : '';
      lines.push(`${' '.repeat(w)}  ${what} at ${x.step}: ${got}${waited} (${x.ms}ms)`);
    }
  });
  if (c.sms && c.sms.length > 0) lines.push('', ...smsLines(c.sms));
  return lines.map(printable).join('\n');
}

/** The SMS a call sent: hash, step, status (its error) and when, then the statuses it went through. */
export function smsLines(sms: readonly SmsRow[]): string[] {
  const lines = [
    `sms sent (delivery ` +
      `status${sms.every((m) => m.history.length <= 1) ? ': no report received yet, see docs/webhooks.md' : ''})`,
  ];
  for (const m of sms) {
    const through = m.history.map((h) => h.status).join(' → ');
    lines.push(
      `  ${m.hash}  at ${m.step}  ${m.status}${m.error ? ` (${m.error})` : ''}  ${shortTime(m.updatedAt)} ` +
        `UTC${m.history.length > 1 ? `  ${through}` : ''}`,
    );
  }
  return lines.map(printable);
}
