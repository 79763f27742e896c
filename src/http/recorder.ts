/**
 * `callscript serve --record <dir>`: collects each call's exchange (every request the
 * engine advanced, its effects and its reply) and, when the call ends, writes it as a
 * replayable scenario file `<dir>/<flow>-<callid>.test.yaml` (src/testing/record.ts).
 * Writing never delays or fails a reply: errors are logged.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildRecording, recordingFileName, recordingYaml, type Exchange } from '../testing/record.js';

export type { CallObserver } from '../engine/report.js';
import { type CallObserver } from '../engine/report.js';

export interface RecorderOptions {
  /** Calls with no request for this long are dropped unwritten (a lost terminal request). Default 2 h. */
  maxIdleMs?: number;
  now?: () => number;
  /** Told about each written file and each failure. */
  onWrite?: (file: string) => void;
  onError?: (err: unknown, callid: string) => void;
}

export class Recorder implements CallObserver {
  private readonly calls = new Map<string, { exchanges: Exchange[]; last: number }>();
  private readonly writing = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(
    readonly dir: string,
    private readonly opts: RecorderOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  exchange(ex: Exchange): void {
    const t = this.now();
    this.purge(t);
    const id = ex.request.callid;
    let call = this.calls.get(id);
    // A first request starts the recording afresh (a callid reused after its call ended).
    if (!call || (ex.request.command === '' && ex.request.command_id === 0)) {
      call = { exchanges: [], last: t };
      this.calls.set(id, call);
    }
    call.exchanges.push(ex);
    call.last = t;
    if (ex.ended) {
      this.calls.delete(id);
      this.write(call.exchanges);
    }
  }

  /** Calls being recorded (not ended yet). */
  get open(): number {
    return this.calls.size;
  }

  /** Waits for the files being written. */
  async flush(): Promise<void> {
    while (this.writing.size > 0) await Promise.all([...this.writing]);
  }

  private purge(t: number): void {
    const max = this.opts.maxIdleMs ?? 2 * 60 * 60 * 1000;
    for (const [id, c] of this.calls) if (t - c.last > max) this.calls.delete(id);
  }

  private write(exchanges: Exchange[]): void {
    const first = exchanges[0]!;
    const file = join(this.dir, recordingFileName(first.flow.name, first.request.callid));
    const p = (async () => {
      try {
        const text = recordingYaml(buildRecording(exchanges, new Date(this.now())));
        await mkdir(this.dir, { recursive: true });
        await writeFile(file, text, 'utf8');
        this.opts.onWrite?.(file);
      } catch (err) {
        this.opts.onError?.(err, first.request.callid);
      }
    })();
    this.writing.add(p);
    void p.then(() => this.writing.delete(p));
  }
}
