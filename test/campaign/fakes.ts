/** A fake clock and a fake dialer for the campaign's tests: no real time passes, nothing is timed. */
import type { Clock } from '../../src/campaign/clock.js';
import { PlaceError, type CallView, type CampaignRow, type Dialer } from '../../src/campaign/types.js';

interface Timer {
  at: number;
  seq: number;
  fire: () => void;
}

export class FakeClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(public t = Date.UTC(2026, 10, 25, 10, 0, 0)) {}

  /** io() work pending: time does not move meanwhile. */
  private busy = 0;

  now(): number {
    return this.t;
  }

  io<T>(work: Promise<T>): Promise<T> {
    this.busy++;
    return work.finally(() => this.busy--);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        at: this.t + Math.max(0, ms),
        seq: this.seq++,
        fire: () => (signal?.removeEventListener('abort', abort), resolve()),
      };
      const abort = () => {
        this.timers = this.timers.filter((x) => x !== timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Runs p to its end: lets every promise run, then moves time to the next timer, again and again. */
  async drive<T>(p: Promise<T>, hooks: { onIdle?: () => void } = {}): Promise<T> {
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let idle = 0; ;) {
      for (let i = 0; i < 30 && !settled; i++) await new Promise((r) => setImmediate(r));
      if (settled) return p;
      if (this.busy > 0) {
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      const next = this.timers.reduce<Timer | undefined>(
        (a, b) => (!a || b.at < a.at || (b.at === a.at && b.seq < a.seq) ? b : a),
        undefined,
      );
      if (next) {
        idle = 0;
        this.t = Math.max(this.t, next.at);
        const due = this.timers.filter((x) => x.at <= this.t).sort((a, b) => a.at - b.at || a.seq - b.seq);
        this.timers = this.timers.filter((x) => x.at > this.t);
        for (const d of due) d.fire();
        continue;
      }
      hooks.onIdle?.();
      // nothing scheduled: a file being read or written; wait for it for real
      await new Promise((r) => setTimeout(r, 2));
      if (++idle > 2500) throw new Error('FakeClock.drive: nothing scheduled and the promise never settles');
    }
  }
}

/**
 * How the fake service treats a number's attempt (1-based): ring/talk time and the call's
 * end, or a place error (after 10 ms, or placeMs); 'hang': the placement never answers.
 * unsent: a placement aborted while it lasts had not sent its request (a PlaceError
 * 'transient', as the admin dialer throws then).
 */
export type Behaviour = (
  number: string,
  attempt: number,
) =>
  | {
      afterMs?: number;
      view?: Partial<CallView>;
      placeMs?: number;
      error?: PlaceError;
      unsent?: true;
      followError?: Error;
    }
  | PlaceError
  | 'hang';

export interface Placed {
  number: string;
  at: number;
  id: string;
  attempt: number;
  vars: Record<string, string>;
}

/** A dialer whose calls take fake time; records every place and the calls in progress. */
export class FakeDialer implements Dialer {
  readonly placed: Placed[] = [];
  readonly followed: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Called as each place() starts (its count, 1-based). */
  onPlace: ((count: number) => void) | undefined;
  private places = 0;
  private ids = new Map<string, { number: string; attempt: number }>();

  constructor(
    private readonly clock: FakeClock,
    private readonly behaviour: Behaviour = () => ({}),
    /** Calls placed by an earlier run (a resumed campaign's fake service): their numbers count. */
    private readonly earlier: Placed[] = [],
  ) {}

  attemptsOf(number: string): number {
    return [...this.earlier, ...this.placed].filter((p) => p.number === number).length;
  }

  /** Tries to place, by number (those that failed too). */
  private readonly tries = new Map<string, number>();

  async place(row: CampaignRow, signal: AbortSignal): Promise<string> {
    const attempt =
      Math.max(this.tries.get(row.number) ?? 0, this.earlier.filter((p) => p.number === row.number).length) + 1;
    this.tries.set(row.number, attempt);
    this.onPlace?.(++this.places);
    const b = this.behaviour(row.number, attempt);
    const spec = b instanceof PlaceError || b === 'hang' ? {} : b;
    const placeMs = b === 'hang' ? 1e12 : (spec.placeMs ?? 10);
    this.enter();
    try {
      await this.clock.sleep(placeMs, signal);
    } catch (e) {
      this.leave();
      if (spec.unsent)
        throw new PlaceError('transient', 'the campaign stopped before the request was sent: not placed');
      throw e;
    }
    if (b instanceof PlaceError || spec.error) {
      this.leave();
      throw b instanceof PlaceError ? b : spec.error;
    }
    const id = `id${[...this.earlier, ...this.placed].length + 1}`;
    this.placed.push({ number: row.number, at: this.clock.now() - placeMs, id, attempt, vars: row.vars });
    this.ids.set(id, { number: row.number, attempt });
    return id;
  }

  async follow(id: string, signal: AbortSignal): Promise<CallView> {
    this.followed.push(id);
    const known = this.ids.get(id) ?? this.earlierId(id);
    const b = this.behaviour(known.number, known.attempt);
    const spec = b instanceof PlaceError || b === 'hang' ? {} : b;
    const resumed = !this.ids.has(id);
    if (resumed) this.enter();
    try {
      await this.clock.sleep(spec.afterMs ?? 1000, signal);
    } finally {
      this.leave();
    }
    if (spec.followError) throw spec.followError;
    const callid = String(1000 + Number(id.slice(2)));
    return {
      status: 'finished',
      callid,
      outcome: 'completed',
      lastStep: 'bye',
      durationMs: spec.afterMs ?? 1000,
      callStatus: 'HANGUP',
      ...spec.view,
    };
  }

  private earlierId(id: string): { number: string; attempt: number } {
    const p = this.earlier.find((x) => x.id === id);
    if (!p) throw new Error(`unknown id ${id}`);
    return p;
  }

  private enter(): void {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
  }

  private leave(): void {
    this.inFlight--;
  }
}

/** Rows as the CSV reader yields them. */
export async function* rowsOf(
  numbers: string[],
  skip: (i: number) => boolean = () => false,
): AsyncGenerator<{ kind: 'row'; row: CampaignRow }> {
  for (const [index, number] of numbers.entries()) {
    if (!skip(index)) yield { kind: 'row', row: { index, line: index + 2, number, vars: { n: String(index) } } };
  }
}

export function numbers(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `+336123${String(45000 + from + i).padStart(5, '0')}`);
}
