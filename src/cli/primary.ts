/**
 * The primary process of `callscript serve --workers N` (node:cluster): it forks N workers,
 * each running the server on the one port (the primary holds the listening socket and hands
 * connections round-robin), and serves nothing itself.
 *
 * - Start: once every worker listens, prints the first one's start output (banner,
 *   diagnostics: the same for all) and a line naming the workers. A worker that exits
 *   while starting ends the start: the others are drained, the primary exits with its code.
 * - A worker that exits unexpectedly is logged and replaced: at once, unless workers keep
 *   dying within 10 s of their start (the second such death in a row waits 0.5 s, then
 *   1 s, 2 s ... up to 30 s). A replacement that fails to start has its output printed.
 * - SIGTERM or SIGINT: every worker is sent SIGTERM, which drains it as it drains a single
 *   `serve` (stop accepting, finish the requests in progress, exit 0); the primary exits when all have, 0 if all exited
 *   0. A second
 *   signal meanwhile kills them (SIGKILL) and the primary exits 1; one within 1 s of the first is
 *   taken as the same stop (a terminal's Ctrl-C reaches `npm start` and the primary, and npm passes it on).
 * - SIGHUP is passed on to every worker serving (each reloads its flows).
 * - A scrape of /metrics on a worker asks, through the primary, every worker serving for its
 *   metrics and answers their sum (src/http/metrics-cluster.ts: the primary relays, waiting
 *   1.5 s at most, never for a worker that died).
 * Its own log lines are pino lines like the workers' (the `pid` field tells them apart).
 */
import cluster, { type Worker } from 'node:cluster';
import { pino, type DestinationStream, type Logger } from 'pino';
import { isStarted, type Started } from './worker-start.js';
import { relayMetrics } from '../http/metrics-cluster.js';

export interface PrimaryOptions {
  workers: number;
  logLevel: string;
  /** Where its log lines go (the workers' format); default pino's stdout (JSON lines). */
  logStream?: DestinationStream;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/** Runs the workers until they have all exited after a signal (or a failed start); resolves with the exit code. */
export function runPrimary(o: PrimaryOptions): Promise<number> {
  return new Promise((resolve) => new Primary(o, resolve).start());
}

/** A replacement that dies within this long of its fork counts as a quick death. */
const QUICK_DEATH_MS = 10_000;
const MAX_DELAY_MS = 30_000;
/**
 * A stop signal repeated within this long of the first is that same stop, not a second one (also for a single `serve`).
 */
export const REPEAT_STOP_MS = 1000;

class Primary {
  private readonly log: Logger;
  private phase: 'starting' | 'serving' | 'stopping' = 'starting';
  /** Live workers, with when each was forked and what it printed while starting. */
  private readonly workers = new Map<Worker, { forkedAt: number; started?: Started }>();
  private quickDeaths = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private exitCode = 0;
  /** When the first stop signal came. */
  private signalledAt: number | undefined;
  private readonly signals: [NodeJS.Signals, () => void][];
  private stopRelay: (() => void) | undefined;

  constructor(
    private readonly o: PrimaryOptions,
    private readonly done: (code: number) => void,
  ) {
    this.log = o.logStream ? pino({ level: o.logLevel }, o.logStream) : pino({ level: o.logLevel });
    const stop = (signal: NodeJS.Signals) => () => this.stop(signal);
    this.signals = [
      ['SIGTERM', stop('SIGTERM')],
      ['SIGINT', stop('SIGINT')],
      // only to workers that listen: one still starting has no handler yet (SIGHUP would end it), and loads the flows
      // anyway
      ['SIGHUP', () => this.forEachWorker((w) => this.workers.get(w)?.started?.ok && w.process.kill('SIGHUP'))],
    ];
  }

  start(): void {
    for (const [signal, on] of this.signals) process.on(signal, on);
    cluster.on('exit', (w, code, signal) => this.exited(w, code, signal));
    this.stopRelay = relayMetrics(cluster, () => [...this.workers].filter(([, e]) => e.started?.ok).map(([w]) => w));
    for (let i = 0; i < this.o.workers; i++) this.fork();
  }

  private fork(): void {
    this.restartTimer = undefined;
    if (this.phase === 'stopping') return;
    const w = cluster.fork();
    this.workers.set(w, { forkedAt: Date.now() });
    w.on('message', (m: unknown) => {
      if (isStarted(m)) this.started(w, m);
    });
  }

  private started(w: Worker, m: Started): void {
    const entry = this.workers.get(w);
    if (!entry) return;
    entry.started = m;
    if (!m.ok) return; // its exit follows: handled there, with this output
    if (this.phase === 'serving') {
      this.log.info({ worker: w.process.pid }, `worker ${w.process.pid} serving`);
      return;
    }
    if (this.phase !== 'starting' || [...this.workers.values()].some((e) => !e.started?.ok)) return;
    this.phase = 'serving';
    this.o.err.write(m.err);
    this.o.out.write(m.out);
    const pids = [...this.workers.keys()].map((x) => x.process.pid).join(', ');
    this.o.out.write(
      `  ${this.o.workers} workers (pids ${pids}; primary ${process.pid}): one that dies is replaced; ` +
        `SIGTERM or SIGINT to the primary drains them\n`,
    );
  }

  private exited(w: Worker, code: number | null, signal: string | null): void {
    const entry = this.workers.get(w);
    if (!entry) return;
    this.workers.delete(w);
    const pid = w.process.pid;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (this.phase === 'stopping') {
      if (signal || code !== 0) this.exitCode = this.exitCode || 1;
      if (this.workers.size === 0) this.finish();
      return;
    }
    if (this.phase === 'starting') {
      // the same flows and settings would fail the same way in a replacement: give up
      if (entry.started) {
        this.o.err.write(entry.started.err);
        this.o.out.write(entry.started.out);
      }
      this.log.error({ worker: pid, code, signal }, `worker ${pid} ${how} while starting: stopping the others`);
      this.exitCode = signal || !code ? 1 : code;
      this.stop();
      return;
    }
    if (entry.started && !entry.started.ok) this.o.err.write(entry.started.err);
    this.quickDeaths = Date.now() - entry.forkedAt < QUICK_DEATH_MS ? this.quickDeaths + 1 : 0;
    const delay = this.quickDeaths <= 1 ? 0 : Math.min(MAX_DELAY_MS, 500 * 2 ** (this.quickDeaths - 2));
    this.log.error(
      { worker: pid, code, signal, restartInMs: delay },
      `worker ${pid} ${how}: starting another${delay ? ` in ${delay / 1000} s` : ''}`,
    );
    if (delay === 0) this.fork();
    else if (!this.restartTimer) this.restartTimer = setTimeout(() => this.forkMissing(), delay);
  }

  /** Forks as many workers as have died since (several may die during one delay). */
  private forkMissing(): void {
    this.restartTimer = undefined;
    while (this.phase !== 'stopping' && this.workers.size < this.o.workers) this.fork();
  }

  private stop(signal?: NodeJS.Signals): void {
    clearTimeout(this.restartTimer);
    if (this.phase === 'stopping') {
      if (!signal) return;
      // the same stop delivered twice (a terminal's Ctrl-C reaches npm and us, and npm passes it on)
      if (this.signalledAt !== undefined && Date.now() - this.signalledAt < REPEAT_STOP_MS) return;
      this.log.warn({ signal }, `${signal} again: killing the ${this.workers.size} workers still draining`);
      this.exitCode = 1;
      this.forEachWorker((w) => w.process.kill('SIGKILL'));
      return;
    }
    this.phase = 'stopping';
    if (signal) this.signalledAt = Date.now();
    if (signal) this.log.info({ signal }, `${signal}: draining ${this.workers.size} workers`);
    if (this.workers.size === 0) return this.finish();
    this.forEachWorker((w) => w.process.kill('SIGTERM'));
  }

  private finish(): void {
    for (const [signal, on] of this.signals) process.off(signal, on);
    this.stopRelay?.();
    cluster.removeAllListeners('exit');
    this.done(this.exitCode);
  }

  private forEachWorker(fn: (w: Worker) => void): void {
    for (const w of this.workers.keys()) fn(w);
  }
}
