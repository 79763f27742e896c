/**
 * What a worker of `callscript serve --workers N` tells its primary over the cluster's IPC
 * channel (the primary's orders are signals: SIGTERM drains, SIGHUP reloads, the same as
 * for a single process). A worker's start output (the banner, the refused flows'
 * diagnostics, warnings) is held and handed to the primary, which prints one worker's:
 * N workers loading the same flows would print it N times. What is written after the start
 * (a refused config change, say) goes straight through.
 */
import { Writable } from 'node:stream';

/** Worker to primary: the start is over (`ok`: listening), and what it printed meanwhile. */
export interface Started {
  callscript: 'started';
  ok: boolean;
  out: string;
  err: string;
}

export function isStarted(m: unknown): m is Started {
  return (
    typeof m === 'object' &&
    m !== null &&
    (m as Started).callscript === 'started' &&
    typeof (m as Started).ok === 'boolean'
  );
}

/** The streams a worker starts with: held until `finish`, passed through after. */
export class StartOutput {
  readonly out: Writable;
  readonly err: Writable;
  private held: { out: string; err: string } | undefined = { out: '', err: '' };

  constructor(out: NodeJS.WritableStream, err: NodeJS.WritableStream) {
    this.out = this.stream('out', out);
    this.err = this.stream('err', err);
  }

  /** Hands what was held to the primary; resolves once it is sent. */
  finish(ok: boolean): Promise<void> {
    const held = this.held ?? { out: '', err: '' };
    this.held = undefined;
    const message: Started = { callscript: 'started', ok, ...held };
    return new Promise((resolve) => {
      if (!process.send) return resolve();
      process.send(message, undefined, {}, () => resolve());
    });
  }

  private stream(which: 'out' | 'err', to: NodeJS.WritableStream): Writable {
    return new Writable({
      decodeStrings: false,
      write: (chunk: string | Buffer, _enc, done) => {
        if (this.held) this.held[which] += String(chunk);
        else to.write(chunk);
        done();
      },
    });
  }
}
