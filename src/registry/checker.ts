/**
 * Where a reload loads and checks the flow texts: on a worker thread, so that a big flow
 * never keeps the event loop (and the calls in progress) waiting. The models come back by
 * structured clone (plain data) and are compiled on the main thread by the registry.
 *
 * One long-lived worker is started at the first check and reused. If it crashes, exits,
 * answers something unexpected or stays silent for `timeoutMs`, it is stopped, a warning
 * (CHECK_WORKER_FAILED) is logged, and that batch is checked on the main thread instead;
 * the next check starts a new worker. A check never rejects.
 */
import { Worker } from 'node:worker_threads';
import { checkFlow, type CheckResult } from '../flow/check.js';
import type { CheckAnswer, CheckRequest } from './check-worker.js';

export interface FlowFile {
  file: string;
  text: string;
}

export interface CheckerLog {
  warn(obj: object, msg: string): void;
}

export interface FlowChecker {
  /** The result of `checkFlow` for each file, in order. Never rejects. */
  check(files: readonly FlowFile[], log: CheckerLog): Promise<CheckResult[]>;
  /** Stops the worker, if any. */
  close(): Promise<void>;
}

export type CheckFn = (text: string, file: string) => CheckResult;

/** checkFlow with a file size limit (absent: the default). */
export function checkerFor(maxFileBytes: number | undefined, environment?: string): CheckFn {
  if (environment !== undefined)
    return (text, file) =>
      checkFlow(text, file, { ...(maxFileBytes === undefined ? {} : { maxFileBytes }), environment });
  return maxFileBytes === undefined ? checkFlow : (text, file) => checkFlow(text, file, { maxFileBytes });
}

/** Checks on the calling thread. */
export function inlineChecker(check: CheckFn = checkFlow): FlowChecker {
  return {
    check: async (files) => files.map((f) => check(f.text, f.file)),
    close: async () => {},
  };
}

export interface WorkerCheckerOptions {
  /** No answer from the worker for this long: taken as hung. Default 30 s. */
  timeoutMs?: number;
  /** Starts the worker. Default `spawnCheckWorker`. */
  spawn?: () => Worker;
  /** The main-thread fallback. Default `checkFlow` (with maxFileBytes). */
  check?: CheckFn;
  /** The file size limit the worker checks with (limits.flow_file_bytes); absent: the default. */
  maxFileBytes?: number;
  /** The environment selected (version 2 environments:); absent: a flow's first one. */
  environment?: string;
}

interface Batch {
  results: CheckResult[];
  left: number;
  timer?: NodeJS.Timeout;
  resolve(results: CheckResult[]): void;
  reject(err: Error): void;
}

/** The worker gave no answer in time (as opposed to crashing). */
class CheckTimeout extends Error {}

const CHECK_TIMEOUT_HINT =
  'A flow checks in about a second per megabyte: one that takes this long is hostile or a checker bug. ' +
  'Report it with the file.';

export class WorkerChecker implements FlowChecker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { batch: Batch; index: number }>();
  private readonly batches = new Set<Batch>();
  private closed = false;
  private readonly timeoutMs: number;

  constructor(private readonly opts: WorkerCheckerOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async check(files: readonly FlowFile[], log: CheckerLog): Promise<CheckResult[]> {
    if (files.length === 0) return [];
    if (!this.closed) {
      try {
        return await this.inWorker(files);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (err instanceof CheckTimeout && !this.closed) {
          // a check this slow would hold every call if redone here: the files are refused (their previous versions
          // serve)
          log.warn(
            { code: 'CHECK_TIMEOUT', err: why, files: files.length },
            `the flow checker's worker gave no answer for ${this.timeoutMs} ms: ${files.length} changed ` +
              `file${files.length === 1 ? ' is' : 's are'} refused, not checked on the main thread; the next ` +
              `reload starts a new worker`,
          );
          return files.map((f) => ({
            diagnostics: [
              {
                code: 'CHECK_TIMEOUT',
                severity: 'error',
                message:
                  `checking this file took over ${this.timeoutMs} ms: it is refused (its previous version, if ` +
                  `any, still serves)`,
                file: f.file,
                line: 0,
                column: 0,
                hint: CHECK_TIMEOUT_HINT,
              },
            ],
          }));
        }
        if (!this.closed) {
          log.warn(
            { code: 'CHECK_WORKER_FAILED', err: why, files: files.length },
            `the flow checker's worker failed (${why}): checking ${files.length} ` +
              `file${files.length === 1 ? '' : 's'} on the main thread instead (calls wait meanwhile); the ` +
              `next reload starts a new worker`,
          );
        }
      }
    }
    const check = this.opts.check ?? checkerFor(this.opts.maxFileBytes, this.opts.environment);
    return files.map((f) => check(f.text, f.file));
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    if (w) await this.fail(w, new Error('the checker was closed'));
  }

  private async inWorker(files: readonly FlowFile[]): Promise<CheckResult[]> {
    const w = this.worker ?? this.start();
    return new Promise<CheckResult[]>((resolve, reject) => {
      const batch: Batch = { results: new Array<CheckResult>(files.length), left: files.length, resolve, reject };
      this.batches.add(batch);
      this.arm(w, batch);
      w.ref();
      try {
        for (const [index, f] of files.entries()) {
          const id = this.nextId++;
          this.waiting.set(id, { batch, index });
          const msg: CheckRequest = {
            id,
            file: f.file,
            text: f.text,
            ...(this.opts.maxFileBytes === undefined ? {} : { maxFileBytes: this.opts.maxFileBytes }),
            ...(this.opts.environment === undefined ? {} : { environment: this.opts.environment }),
          };
          w.postMessage(msg);
        }
      } catch (err) {
        void this.fail(w, err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  private start(): Worker {
    const w = (this.opts.spawn ?? spawnCheckWorker)();
    this.worker = w;
    w.unref();
    w.on('message', (m: unknown) => this.answer(w, m));
    w.on('error', (err: Error) => void this.fail(w, err));
    w.on('messageerror', (err: Error) => void this.fail(w, err));
    w.on('exit', (code: number) => void this.fail(w, new Error(`the worker exited with code ${code}`)));
    return w;
  }

  /** (Re)starts the batch's silence timer: it runs from the last answer. */
  private arm(w: Worker, batch: Batch): void {
    clearTimeout(batch.timer);
    batch.timer = setTimeout(
      () => void this.fail(w, new CheckTimeout(`no answer for ${this.timeoutMs} ms`)),
      this.timeoutMs,
    );
  }

  private answer(w: Worker, m: unknown): void {
    if (this.worker !== w) return;
    const a = m as Partial<CheckAnswer> | null;
    const at = typeof a?.id === 'number' ? this.waiting.get(a.id) : undefined;
    if (!at || !Array.isArray(a?.result?.diagnostics)) {
      void this.fail(w, new Error('the worker answered something unexpected'));
      return;
    }
    this.waiting.delete(a.id!);
    const { batch, index } = at;
    batch.results[index] = a.result;
    if (--batch.left > 0) {
      this.arm(w, batch);
    } else {
      clearTimeout(batch.timer);
      this.batches.delete(batch);
      batch.resolve(batch.results);
    }
    if (this.waiting.size === 0) w.unref();
  }

  /** Drops the worker: every batch it holds fails (and is checked on the main thread). */
  private async fail(w: Worker, err: Error): Promise<void> {
    if (this.worker !== w) return;
    this.worker = undefined;
    const batches = [...this.batches];
    this.batches.clear();
    this.waiting.clear();
    for (const b of batches) {
      clearTimeout(b.timer);
      b.reject(err);
    }
    await w.terminate().catch(() => undefined);
  }
}

/**
 * Starts a worker thread on the module `name` beside the module at `here` (its
 * import.meta.url): the checker's (check-worker), the web console's layout
 * (src/http/layout-worker). From the built package, `name`.js. From the TypeScript sources
 * (npm run callscript, vitest, tsx) a worker does not inherit the parent's loader (on Node
 * 20, neither an inherited nor an explicit `--import tsx` in the worker's execArgv makes it
 * load .ts files), so a two-line bootstrap imports `name`.ts through tsx's API (`tsImport`).
 */
export function spawnModuleWorker(here: string, name: string): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here));
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL(`./${name}.ts`, here).href;
  return new Worker(TS_BOOT, { eval: true, workerData: { tsx, entry } });
}

/** Starts the checker's worker (check-worker.ts). */
export function spawnCheckWorker(): Worker {
  return spawnModuleWorker(import.meta.url, 'check-worker');
}

// tsx's ESM API (its CommonJS build of tsImport resolves its own loader wrongly).
const TS_BOOT = `const { workerData } = require('node:worker_threads');
import(workerData.tsx).then(({ tsImport }) => tsImport(workerData.entry, workerData.entry));`;
