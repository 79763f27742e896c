/**
 * The canary's coin: a number in [0, 1) drawn from the callid and a seed, so that one
 * callid always lands on the same side (a retried first request too) and tests can seed it.
 */
import { createHash } from 'node:crypto';

export type Roll = (callid: string, flow: string) => number;

export function seededRoll(seed: string): Roll {
  return (callid, flow) => {
    const h = createHash('sha256').update(`${seed}\u0000${flow}\u0000${callid}`).digest();
    return h.readUInt32BE(0) / 0x1_0000_0000;
  };
}

/** Whether a call goes to the canary (the newest version) at `percent` (0..100). */
export function toCanary(roll: number, percent: number): boolean {
  return roll < percent / 100;
}
