/**
 * The campaign's rate limit: a token bucket of one token refilled at `rate` per second, so
 * calls are spaced evenly, one every 1/rate seconds (the virtual-scheduling form: the time
 * the next token is there). By a time t after the first call, at most 1 + rate × t calls
 * have been placed.
 */
export class TokenBucket {
  private readonly intervalMs: number;
  /** When the next token is there (epoch ms); -Infinity: now. */
  private nextAt = -Infinity;

  constructor(rate: number) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`rate must be a positive number, got ${rate}`);
    this.intervalMs = 1000 / rate;
  }

  /** Milliseconds to wait before a token is there (0: now). */
  delay(now: number): number {
    return now >= this.nextAt ? 0 : Math.ceil(this.nextAt - now);
  }

  /** Takes the token; call only when delay(now) is 0. */
  take(now: number): void {
    this.nextAt = Math.max(this.nextAt, now) + this.intervalMs;
  }
}
