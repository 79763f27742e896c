/**
 * The campaign's progress output (stderr), guarded: a reader that goes away (`callscript
 * campaign … 2>&1 | head -3`: EPIPE) or any other write error silences the output, never the
 * campaign. Its calls go on to their end, the state is saved and the lock dropped as usual;
 * only the lines are lost (the results file and the state have everything).
 */
import { Writable } from 'node:stream';

export interface GuardedOutput {
  /** Writes to the target until it fails, then drops what is written. */
  stream: Writable;
  /** The error that silenced the output, if one did. */
  failed(): Error | undefined;
}

export function guardOutput(target: NodeJS.WritableStream): GuardedOutput {
  let failure: Error | undefined;
  // a listener kept for good: an EPIPE may be reported after the campaign's last line
  target.on('error', (e: Error) => (failure ??= e));
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, done) {
      if (failure === undefined) {
        try {
          target.write(chunk);
        } catch (e) {
          failure = e as Error;
        }
      }
      done();
    },
  });
  return { stream, failed: () => failure };
}
