/**
 * `callscript serve --record <dir>`: collects each call's exchange (every request the
 * engine advanced, its effects and its reply) and, when the call ends, writes it as a
 * replayable scenario file `<dir>/<flow>-<callid>.test.yaml` (src/testing/record.ts).
 * Writing never delays or fails a reply: errors are logged.
 *
 * A recording keeps the requests whole (a replay needs them), so what it holds is bounded in bytes (the JSON of its
 * exchanges): a call past `maxCallBytes`, or whose exchange would take the calls being recorded past `maxBytes`, is no
 * longer recorded (its exchanges are dropped, onError is told; its next first request starts afresh).
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
  /** Bytes of one call's recording (the JSON of its exchanges), at most. Default 4 MiB. */
  maxCallBytes?: number;
  /** Bytes of all the calls being recorded, at most. Default 64 MiB. */
  maxBytes?: number;
}

export const RECORDING_CALL_BYTES = 4 * 1024 * 1024;
export const RECORDING_BYTES = 64 * 1024 * 1024;

/** The note of a call whose recording went over its bytes: its further exchanges are ignored. */
const DROPPED = Symbol('dropped');

export class Recorder implements CallObserver {
  private readonly calls = new Map<string, { exchanges: Exchange[] | typeof DROPPED; last: number; bytes: number }>();
  /** Bytes of the calls being recorded. */
  private bytes = 0;
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
      this.forget(id);
      call = { exchanges: [], last: t, bytes: 0 };
      this.calls.set(id, call);
    }
    call.last = t;
    if (call.exchanges === DROPPED) {
      if (ex.ended) this.calls.delete(id);
      return;
    }
    const size = jsonBytes(ex);
    const maxCall = this.opts.maxCallBytes ?? RECORDING_CALL_BYTES;
    const maxAll = this.opts.maxBytes ?? RECORDING_BYTES;
    if (call.bytes + size > maxCall || this.bytes + size > maxAll) {
      const over =
        call.bytes + size > maxCall
          ? `its exchanges are over ${maxCall} bytes`
          : `the calls being recorded are over ${maxAll} bytes`;
      this.bytes -= call.bytes;
      call.bytes = 0;
      call.exchanges = DROPPED;
      if (ex.ended) this.calls.delete(id);
      this.opts.onError?.(new Error(`the recording of call ${id} is dropped: ${over}`), id);
      return;
    }
    call.exchanges.push(ex);
    call.bytes += size;
    this.bytes += size;
    if (ex.ended) {
      this.forget(id);
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
    for (const [id, c] of this.calls) if (t - c.last > max) this.forget(id);
  }

  /** The call is no longer recorded here: its bytes are freed. */
  private forget(id: string): void {
    const c = this.calls.get(id);
    if (!c) return;
    this.bytes -= c.bytes;
    this.calls.delete(id);
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

/** The UTF-8 bytes of an exchange's JSON (Infinity when it has none: it is not recorded). */
function jsonBytes(ex: Exchange): number {
  try {
    return Buffer.byteLength(JSON.stringify(ex), 'utf8');
  } catch {
    return Infinity;
  }
}
