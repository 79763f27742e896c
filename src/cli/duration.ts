/** Durations as the commands take them: `120s`, `5m`, `1h`, `500ms`, or a number of seconds. */
export function parseDuration(text: string, what: string, bounds: { minMs: number; maxMs: number }): number | string {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m?.[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = m ? Math.round(Number(m[1]) * unit) : NaN;
  if (!Number.isFinite(ms) || ms < bounds.minMs || ms > bounds.maxMs) {
    return (
      `${what} must be a duration from ${shownMs(bounds.minMs)} to ${shownMs(bounds.maxMs)} (e.g. 90s, 2m, ` +
      `500ms; a number is seconds), not "${text}"`
    );
  }
  return ms;
}

function shownMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
