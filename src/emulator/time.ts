/** Clocks and the service's datetime format (YYYY-MM-DD HH:MM:SS, UTC). */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export type Sleep = (ms: number) => Promise<void>;

export const systemClock: Clock = { now: () => Date.now() };

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** How the service writes a date that is not set. */
export const ZERO_DATE = '0000-00-00 00:00:00';

export function formatDatetime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Milliseconds of a `YYYY-MM-DD HH:MM:SS` (UTC) text; check it with checkDatetime first. */
export function parseDatetime(text: string): number {
  return Date.parse(text.replace(' ', 'T') + 'Z');
}
