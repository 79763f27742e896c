/**
 * The shell around `Registry.reloadAsync`: read the flows directory until stable, apply,
 * log what happened (refused files with their diagnostics, each publish with its impact
 * report, deleted flows), release idle versions. Reloads never overlap: one asked for
 * while another runs starts when it ends (and one more covers any number of asks).
 * Changed files are checked on the checker's worker thread (checker.ts), so a reload never
 * keeps the calls in progress waiting for the checker; unchanged files are not checked.
 */
import { basename } from 'node:path';
import type { Diagnostic } from '../errors/diagnostic.js';
import { impactText } from './impact.js';
import { readStableFlows } from './load.js';
import { WorkerChecker, type FlowChecker } from './checker.js';
import { dirMissing, type LiveView, type Registry, type ReloadResult } from './registry.js';

export interface ReloadLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a reload did, as the admin API answers it (file names only, no paths). */
export interface ReloadSummary {
  ok: boolean;
  reason: string;
  published: ReloadResult['published'];
  unchanged: string[];
  deleted: string[];
  kept: string[];
  refused: { file: string; diagnostics: Diagnostic[] }[];
  /** Set when the directory could not be read or never settled: nothing changed. */
  message?: string;
}

export interface ReloaderOptions {
  /** Reads the flows directory. Default: readStableFlows. */
  read?: (dir: string) => Promise<{ file: string; text: string }[] | undefined>;
  /** Checks the changed texts. Default: a WorkerChecker (one worker thread, started at the first reload). */
  checker?: FlowChecker;
  /** With the default reader: how long files must stay unchanged before they are read as final. Default 1000 ms. */
  settleMs?: number;
  /** With the default checker: the file size limit (limits.flow_file_bytes); absent: 2 MiB. */
  maxFileBytes?: number;
  /** With the default checker: the environment selected (version 2 environments:). */
  environment?: string;
}

export class Reloader {
  private running: Promise<ReloadSummary> | undefined;
  private again: Promise<ReloadSummary> | undefined;
  private readonly read: (dir: string) => Promise<{ file: string; text: string }[] | undefined>;
  readonly checker: FlowChecker;

  constructor(
    readonly registry: Registry,
    readonly dir: string | undefined,
    private readonly live: LiveView,
    opts: ReloaderOptions = {},
  ) {
    this.read = opts.read ?? ((d) => readStableFlows(d, opts.settleMs));
    this.checker =
      opts.checker ??
      new WorkerChecker({
        ...(opts.maxFileBytes === undefined ? {} : { maxFileBytes: opts.maxFileBytes }),
        ...(opts.environment === undefined ? {} : { environment: opts.environment }),
      });
  }

  /** Stops the checker's worker (a reload under way finishes, checking on the main thread). */
  close(): Promise<void> {
    return this.checker.close();
  }

  /** Reloads now, or right after the reload under way. */
  reload(reason: string, log: ReloadLogger): Promise<ReloadSummary> {
    if (!this.running) {
      this.running = this.run(reason, log).finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    if (!this.again) {
      this.again = this.running.then(() => {
        this.again = undefined;
        return this.reload(reason, log);
      });
    }
    return this.again;
  }

  private async run(reason: string, log: ReloadLogger): Promise<ReloadSummary> {
    const empty = { reason, published: [], unchanged: [], deleted: [], kept: [], refused: [] };
    if (this.dir === undefined)
      return { ok: false, ...empty, message: 'no flows directory to reload from (the registry was given by code)' };
    let files: { file: string; text: string }[] | undefined;
    try {
      files = await this.read(this.dir);
    } catch (err) {
      const d = dirMissing(this.dir, err);
      log.error({ code: d.code, reason }, `reload refused: ${d.message}; the loaded flows keep serving`);
      return { ok: false, ...empty, message: d.message };
    }
    if (!files) {
      const message = `the files of ${this.dir} kept changing: nothing reloaded; the next change retries`;
      log.warn({ code: 'FILES_UNSTABLE', reason }, message);
      return { ok: false, ...empty, message };
    }
    const r = await this.registry.reloadAsync(files, this.live, { checker: this.checker, log });
    const served = new Set(this.registry.list().map((f) => f.file));
    for (const file of r.refused) {
      // a file that had a version loaded keeps serving it; a new one is not served until fixed
      const then = served.has(basename(file))
        ? 'edit refused: the previous version keeps serving'
        : 'file refused: not served until fixed (no version of it was loaded)';
      for (const d of r.diagnostics.filter((x) => x.file === file && x.severity === 'error')) {
        log.error(
          { code: d.code, file: basename(d.file), line: d.line, column: d.column, reason },
          `${d.file}:${d.line}:${d.column} error ${d.code} ${d.message} (${then})`,
        );
      }
    }
    for (const p of r.published) {
      log.info(
        { code: 'FLOW_PUBLISHED', flow: p.name, version: p.version, from: p.from, reason },
        `flow ${p.name} version ${p.version} published${p.from ? ` (was ${p.from})` : ''}: new calls get it`,
      );
      if (p.impact) log.info({ code: 'FLOW_IMPACT', ...p.impact }, impactText(p.impact));
    }
    if (r.checked.length > 0) {
      const t = r.timings;
      const ms = (x: number) => Math.round(x * 10) / 10;
      log.info(
        {
          reason,
          checked: r.checked.map((f) => basename(f)),
          checkMs: ms(t.checkMs),
          compileMs: ms(t.compileMs),
          applyMs: ms(t.applyMs),
        },
        `reload (${reason}): ${r.checked.length} changed file${r.checked.length === 1 ? '' : 's'} checked ` +
          `in ${ms(t.checkMs)} ms; on the main thread, compiled in ${ms(t.compileMs)} ms and applied ` +
          `in ${ms(t.applyMs)} ms`,
      );
    }
    for (const name of r.deleted)
      log.warn(
        { code: 'FLOW_DELETED', flow: name, reason },
        `flow ${name}: its file is gone; no new calls, live calls finish on their version`,
      );
    // Asked for (SIGHUP, the admin API) and nothing to do: say so, so the operator knows it ran.
    if (reason !== 'file change' && r.published.length + r.deleted.length + r.refused.length === 0)
      log.info({ reason }, `reload (${reason}): no flow changed`);
    return {
      ok: true,
      reason,
      published: r.published,
      unchanged: r.unchanged,
      deleted: r.deleted,
      kept: r.kept,
      refused: r.refused.map((file) => ({
        file: basename(file),
        diagnostics: (this.registry.pendingErrors().get(file) ?? []).map((d) => ({ ...d, file: basename(d.file) })),
      })),
    };
  }
}
