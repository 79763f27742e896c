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
