/**
 * What a campaign shows while it runs, on stderr: on a terminal, one progress line redrawn
 * in place (a bar, rows done of all, calls in progress, rows waiting for a retry, outcomes
 * so far), with invalid rows and warnings printed above it; elsewhere (a pipe, a file, CI)
 * plain lines, one per row done, retry and warning.
 */
import { printable } from '../terminal/printable.js';
import type { CampaignEvent, RowResult } from './types.js';

export interface ProgressOptions {
  out: NodeJS.WritableStream;
  /** A terminal: redraw one line. */
  tty: boolean;
  /** The CSV's rows. */
  total: number;
  /** Rows done before this run (a resumed campaign). */
  doneBefore?: number;
  /** Their outcomes, counted: the summary is the whole campaign's. */
  outcomesBefore?: ReadonlyMap<string, number>;
  now?: () => number;
  /** Terminal columns (the line is cut to them). */
  columns?: number;
}

const BAR = 24;
const REDRAW_MS = 100;

export class Progress {
  private done: number;
  private readonly outcomes = new Map<string, number>();
  /** line → what it is doing: calling, waiting */
  private readonly rows = new Map<number, 'calling' | 'waiting'>();
  private lastDraw = -Infinity;
  private drawn = false;

  constructor(private readonly o: ProgressOptions) {
    this.done = o.doneBefore ?? 0;
    for (const [k, n] of o.outcomesBefore ?? []) this.outcomes.set(k, n);
  }

  event(e: CampaignEvent): void {
    switch (e.type) {
      case 'placed':
        this.rows.set(e.line, 'calling');
        break;
      case 'retry':
        this.rows.set(e.line, 'waiting');
        if (!this.o.tty)
          this.line(`line ${e.line} ${e.number}: ${e.why}, tried again at ${clock(e.at)} (attempt ${e.attempt + 1})`);
        break;
      case 'result':
        this.rows.delete(e.result.line);
        this.done++;
        this.outcomes.set(e.result.outcome, (this.outcomes.get(e.result.outcome) ?? 0) + 1);
        if (!this.o.tty && e.result.outcome !== 'invalid')
          this.line(`[${this.done}/${this.o.total}] ${resultText(e.result)}`);
        break;
      case 'invalid':
        this.line(`line ${e.line}: invalid: ${e.reason}`);
        break;
      case 'warning':
        this.line(`warning: ${e.message}`);
        break;
    }
    if (this.o.tty) this.draw(false);
  }

  /** The counts of outcomes, earlier runs' included: `80 completed, 10 abandoned, 1 invalid`. */
  summary(): string {
    const parts = [...this.outcomes]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, n]) => `${n} ${k}`);
    return parts.length ? parts.join(', ') : 'no row done';
  }

  /** Rows done, earlier runs' included. */
  doneCount(): number {
    return this.done;
  }

  /** Draws the last state of the bar (a terminal) and ends its line. */
  end(): void {
    if (!this.o.tty) return;
    this.draw(true);
    this.o.out.write('\n');
    this.drawn = false;
  }

  private line(text: string): void {
    if (this.o.tty && this.drawn) this.o.out.write('\r\x1b[2K');
    this.o.out.write(`${printable(text)}\n`);
    if (this.o.tty && this.drawn) {
      this.drawn = false;
      this.draw(true);
    }
  }

  private draw(force: boolean): void {
    const now = (this.o.now ?? Date.now)();
    if (!force && now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    const total = Math.max(this.o.total, 1);
    const filled = Math.min(BAR, Math.floor((this.done / total) * BAR));
    let calling = 0;
    let waiting = 0;
    for (const s of this.rows.values()) {
      if (s === 'calling') calling++;
      else waiting++;
    }
    // escaped before it is cut to the terminal's width (an escape is longer than its character)
    let text = printable(
      `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${this.done}/${this.o.total}  ${calling} calling ` +
        ` ${waiting} to retry  ${this.outcomes.size ? this.summary() : ''}`.trimEnd(),
    );
    const cols = this.o.columns ?? 0;
    if (cols > 10 && text.length > cols - 1) text = `${text.slice(0, cols - 2)}…`;
    this.o.out.write(`\r\x1b[2K${text}`);
    this.drawn = true;
  }
}

/** A row done, in words: `line 3 +33612345678: completed (HANGUP), last step bye, 12.3 s, attempt 1, callid 123`. */
export function resultText(r: RowResult): string {
  const parts = [`line ${r.line} ${r.number}: ${r.outcome}${r.callStatus ? ` (${r.callStatus})` : ''}`];
  if (r.lastStep) parts.push(`last step ${r.lastStep}`);
  if (r.durationMs !== null) parts.push(`${(r.durationMs / 1000).toFixed(1)} s`);
  parts.push(`${r.attempts === 1 ? 'attempt' : 'attempts'} ${r.attempts}`);
  if (r.callid) parts.push(`callid ${r.callid}`);
  if (r.detail) parts.push(r.detail);
  return parts.join(', ');
}

function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 19)} UTC`;
}
