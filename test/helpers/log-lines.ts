/** A stream for a server's logger that keeps what it is written, one chunk (a log line) an entry. */
import { Writable } from 'node:stream';

export function logLines(): { logs: string[]; stream: Writable } {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  return { logs, stream };
}

/**
 * The log lines as one text without their timings and pid: numbers in which a short secret's digits (a 4-digit PIN)
 * come up by chance ("responseTime":13.84482100000605 holds 4821), for the assertions that a value is never logged.
 */
export function logText(logs: readonly string[]): string {
  return logs.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), time: 0, responseTime: 0, pid: 0 })).join('\n');
}
