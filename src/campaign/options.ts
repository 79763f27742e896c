/**
 * `callscript campaign`'s flags, checked: each bad one gets a message naming it and what it
 * takes (docs/campaign.md).
 */
import { resolve } from 'node:path';

export interface CampaignFlags {
  app?: string;
  server?: string;
  rate?: string;
  concurrency?: string;
  retries?: string;
  retryDelay?: string;
  results?: string;
  state?: string;
  timeout?: string;
  poll?: string;
}

export interface CampaignSettings {
  csv: string;
  app: string;
  rate: number;
  concurrency: number;
  retries: number;
  retryDelayMs: number;
  timeoutMs: number;
  /** Time between two reads of a call in progress. */
  pollMs: number;
  results: string;
  resultsGiven: boolean;
  state: string;
}

export const CAMPAIGN_DEFAULTS = {
  rate: 1,
  concurrency: 5,
  retries: 2,
  retryDelayMs: 5 * 60_000,
  timeoutMs: 120_000,
  pollMs: 1000,
} as const;

const DAY = 24 * 3600_000;

/** The settings, or the message of the first bad flag. Paths are made absolute. */
export function campaignSettings(csv: string, f: CampaignFlags, cwd = process.cwd()): CampaignSettings | string {
  if (f.app === undefined || !/^[A-Za-z0-9]{1,64}$/.test(f.app))
    return (
      `--app HASH is required: the REALTIME10 application whose flow takes the calls (letters and digits, e.g. ` +
      `A1B2C3D4; callscript apps list)${f.app !== undefined ? `, not "${f.app}"` : ''}`
    );
  const rate =
    f.rate === undefined ? CAMPAIGN_DEFAULTS.rate : /^[0-9]+(\.[0-9]+)?$/.test(f.rate) ? Number(f.rate) : NaN;
  if (!(rate >= 0.001 && rate <= 1000))
    return `--rate must be the calls placed per second, from 0.001 to 1000 (0.5: one every 2 s), not "${f.rate}"`;
  const concurrency = int(f.concurrency, CAMPAIGN_DEFAULTS.concurrency);
  if (!(concurrency >= 1 && concurrency <= 1000))
    return `--concurrency must be an integer from 1 to 1000 (calls in progress at once), not "${f.concurrency}"`;
  const retries = int(f.retries, CAMPAIGN_DEFAULTS.retries);
  if (!(retries >= 0 && retries <= 20))
    return `--retries must be an integer from 0 to 20 (attempts after the first), not "${f.retries}"`;
  const retryDelayMs = f.retryDelay === undefined ? CAMPAIGN_DEFAULTS.retryDelayMs : durationMs(f.retryDelay);
  if (!(retryDelayMs >= 0 && retryDelayMs <= 7 * DAY))
    return `--retry-delay must be a duration from 0s to 7d, such as 30s, 5m, 1h, not "${f.retryDelay}"`;
  const timeoutMs = f.timeout === undefined ? CAMPAIGN_DEFAULTS.timeoutMs : durationMs(f.timeout);
  if (!(timeoutMs >= 1000 && timeoutMs <= DAY))
    return (
      `--timeout must be a duration from 1s to 24h (how long a call is followed), such as 120s, 10m, not ` +
      `"${f.timeout}"`
    );
  const pollMs = f.poll === undefined ? CAMPAIGN_DEFAULTS.pollMs : durationMs(f.poll);
  if (!(pollMs >= 100 && pollMs <= 60_000))
    return (
      `--poll must be a duration from 100ms to 60s (time between two reads of a call in progress), not ` + `"${f.poll}"`
    );
  const abs = resolve(cwd, csv);
  const base = abs.replace(/\.csv$/i, '');
  const results = f.results !== undefined ? resolve(cwd, f.results) : `${base}.results.csv`;
  const state = f.state !== undefined ? resolve(cwd, f.state) : `${abs}.state.json`;
  if (results === abs) return `--results must not be the CSV itself (${csv})`;
  if (state === abs || state === results) return `--state must be a file of its own, not the CSV or the results`;
  return {
    csv: abs,
    app: f.app,
    rate,
    concurrency,
    retries,
    retryDelayMs,
    timeoutMs,
    pollMs,
    results,
    resultsGiven: f.results !== undefined,
    state,
  };
}

/** `90`, `90s`, `1.5m`, `500ms`, `2h`, `1d` in ms (a number alone is seconds); NaN when not one. */
export function durationMs(text: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return NaN;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: DAY }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * unit);
}

function int(text: string | undefined, dflt: number): number {
  if (text === undefined) return dflt;
  return /^[0-9]{1,6}$/.test(text) ? Number(text) : NaN;
}
