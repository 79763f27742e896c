/**
 * The loaded flows: each flow by name, its versions by content hash, and which version
 * new calls get. A live call names its version in its snapshot and is served by it.
 *
 * `reload` takes the full list of flow texts (no fs here: see load.ts) and, per flow:
 * same hash, nothing; a new hash that validates, a new current version (old ones kept);
 * errors, the current version stays and the diagnostics are kept as the file's pending
 * errors until fixed; file gone, the flow is deleted (no new calls, live calls finish).
 * Versions no live call uses are released by `release` (the newest, the pinned and the
 * previous one stay loaded).
 *
 * Incremental: a file is checked and compiled once per content; a reload that finds the
 * same text in the same file reuses its check result and its CompiledFlow (the very same
 * object). `reloadAsync` checks the new texts with a FlowChecker (a worker thread: see
 * checker.ts) and compiles them here one at a time, letting requests in between.
 */
import { basename } from 'node:path';
import {
  compileAll,
  FlowFiles,
  noTimings,
  yieldToLoop,
  type FlowText,
  type LoadReport,
  type ReloadTimings,
} from './files.js';
import type { CompiledFlow } from '../engine/compile.js';
import type { Diagnostic } from '../errors/diagnostic.js';
import { seededRoll, toCanary, type Roll } from './canary.js';
import { impactReport, type ImpactReport } from './impact.js';
import { readFlows } from './load.js';
import { checkerFor, type CheckerLog, type CheckFn, type FlowChecker } from './checker.js';

export { listFlowFiles } from './load.js';
export { compileAll, type LoadReport, type ReloadTimings } from './files.js';

export interface VersionRecord {
  version: string;
  file: string;
  /** Epoch ms. */
  publishedAt: number;
  /** The source text (to load the version again for a rollback once released). */
  source: string;
}

export interface FlowEntry {
  name: string;
  file: string;
  /** The last version published. */
  newest: CompiledFlow;
  /** The version that was current when `newest` was published: the canary's other side. */
  previous?: string;
  /** Set by a rollback: new calls get this version instead of the newest. */
  pinned?: string;
  /** Percent of new calls sent to `newest` while the rest get `pinned ?? previous`. */
  canary?: number;
  /** The file is gone: no new calls; the versions stay while live calls use them. */
  deleted: boolean;
  /** Loaded versions by hash. */
  versions: Map<string, CompiledFlow>;
  /** Every version published, oldest first. */
  history: VersionRecord[];
  /** The report of the last publish that replaced a version. */
  impact?: ImpactReport;
}

export interface ReloadResult extends LoadReport {
  published: { name: string; version: string; from?: string; impact?: ImpactReport }[];
  unchanged: string[];
  deleted: string[];
  /** Flows whose file has errors: they keep serving their current version. */
  kept: string[];
  /** Files whose text was new to the registry: checked (and compiled when clean) by this reload. */
  checked: string[];
  timings: ReloadTimings;
}

/** Where live calls are, per version: given by the HTTP layer (LiveCalls). */
export interface LiveView {
  count(flow: string, version: string): number;
  of(flow: string, version: string): Iterable<{ step: string }>;
}

const NO_LIVE: LiveView = { count: () => 0, of: () => [] };

export interface RegistryOptions {
  /** The canary's coin (default: seeded from `seed`, itself default "callscript"). */
  roll?: Roll;
  seed?: string;
  now?: () => number;
  /** How `reload` checks a text on this thread (`reloadAsync` uses the checker it is given). Default checkFlow. */
  check?: CheckFn;
  /** The file size limit of the default check (limits.flow_file_bytes); absent: 2 MiB. */
  maxFileBytes?: number;
  /**
   * The environment selected (version 2 environments:; --env, environment:, CALLSCRIPT_ENV); absent: a flow's first
   * one.
   */
  environment?: string;
}

export class Registry {
  private readonly entries = new Map<string, FlowEntry>();
  /** Error diagnostics of refused files, by file path: the pending errors. */
  private pending = new Map<string, Diagnostic[]>();
  private readonly roll: Roll;
  private readonly now: () => number;
  /** The listed files as last checked and compiled. */
  private readonly files: FlowFiles;
  /** Whether `reload` ran (pending errors are then this registry's own). */
  reloaded = false;
  private readonly maxFileBytes: number | undefined;
  private readonly environment: string | undefined;

  constructor(opts: RegistryOptions = {}) {
    this.roll = opts.roll ?? seededRoll(opts.seed ?? 'callscript');
    this.now = opts.now ?? Date.now;
    this.files = new FlowFiles(opts.check ?? checkerFor(opts.maxFileBytes, opts.environment));
    this.maxFileBytes = opts.maxFileBytes;
    this.environment = opts.environment;
  }

  /** Loads every flow file of `dir`. Never throws for bad flows: they are reported. */
  static async fromDirectory(
    dir: string,
    opts: RegistryOptions = {},
  ): Promise<{ registry: Registry; report: LoadReport }> {
    const registry = new Registry(opts);
    let read: Awaited<ReturnType<typeof readFlows>>;
    try {
      read = await readFlows(dir);
    } catch (err) {
      return { registry, report: { diagnostics: [dirMissing(dir, err)], sources: new Map(), refused: [] } };
    }
    const report = registry.reload(read.texts);
    for (const u of read.unread) {
      report.diagnostics.push({
        code: 'UNREADABLE_FILE',
        severity: 'error',
        message: `${u.file} is not read: ${u.why}`,
        file: u.file,
        line: 0,
        column: 0,
        hint: 'Copy the flow into the flows directory instead of linking to it.',
      });
      report.refused.push(u.file);
    }
    return { registry, report };
  }

  /** Applies the full list of flow texts (see the module comment), checking new texts on this thread. */
  reload(files: { file: string; text: string }[], live: LiveView = NO_LIVE): ReloadResult {
    const texts = this.files.hashed(files);
    return this.apply(texts, this.files.stale(texts), live, noTimings());
  }

  /**
   * Like `reload`, but the new texts are checked by `checker` (a worker thread) and
   * compiled here one at a time with a turn of the event loop in between; the rest (cheap)
   * is applied at once at the end. Unchanged files cost a hash.
   */
  async reloadAsync(
    files: { file: string; text: string }[],
    live: LiveView,
    ctx: { checker: FlowChecker; log: CheckerLog },
  ): Promise<ReloadResult> {
    const texts = this.files.hashed(files);
    const stale = this.files.stale(texts);
    const timings = noTimings();
    const t0 = performance.now();
    const results = await ctx.checker.check(stale, ctx.log);
    timings.checkMs = performance.now() - t0;
    await this.files.take(stale, results, timings);
    await yieldToLoop();
    return this.apply(texts, stale, live, timings);
  }

  private apply(texts: FlowText[], stale: FlowText[], live: LiveView, timings: ReloadTimings): ReloadResult {
    const start = performance.now();
    const { checkMs, compileMs } = timings;
    this.reloaded = true;
    // Files that already own a flow are admitted first: a new file cannot take their name.
    const owners = new Set([...this.entries.values()].filter((e) => !e.deleted).map((e) => e.file));
    const ordered = [...texts].sort(
      (a, b) => Number(owners.has(b.file)) - Number(owners.has(a.file)) || a.file.localeCompare(b.file),
    );
    const { flows, report } = this.files.admit(ordered, timings);
    const result: ReloadResult = {
      ...report,
      published: [],
      unchanged: [],
      deleted: [],
      kept: [],
      checked: stale.map((f) => f.file),
      timings,
    };
    this.pending = new Map();
    for (const file of report.refused)
      this.pending.set(
        file,
        report.diagnostics.filter((d) => d.file === file && d.severity === 'error'),
      );
    const seen = new Set<string>();
    for (const flow of flows) {
      seen.add(flow.name);
      const file = flow.model.file;
      const entry = this.entries.get(flow.name);
      if (entry && !entry.deleted && entry.newest.version === flow.version) {
        entry.file = file;
        result.unchanged.push(flow.name);
        continue;
      }
      const from = entry && !entry.deleted ? this.currentOf(entry) : undefined;
      this.publish(flow, file, report.bundles?.get(file) ?? report.sources.get(file) ?? '');
      const e = this.entries.get(flow.name)!;
      if (from && from.version !== flow.version) {
        e.impact = impactReport(
          from,
          flow,
          [...live.of(flow.name, from.version)].map((c) => c.step),
          this.now(),
        );
      }
      result.published.push({
        name: flow.name,
        version: flow.version,
        ...(from ? { from: from.version } : {}),
        ...(e.impact?.to === flow.version ? { impact: e.impact } : {}),
      });
    }
    for (const e of this.entries.values()) {
      if (seen.has(e.name) || e.deleted) continue;
      if (this.pending.has(e.file)) {
        result.kept.push(e.name);
        continue;
      }
      e.deleted = true;
      e.canary = undefined;
      e.pinned = undefined;
      result.deleted.push(e.name);
    }
    this.release(live);
    timings.applyMs = performance.now() - start - (timings.checkMs - checkMs) - (timings.compileMs - compileMs);
    return result;
  }

  /** Adds a version and makes it current for new calls (a rollback pin is cleared). */
  publish(flow: CompiledFlow, file: string, source = ''): void {
    const record: VersionRecord = { version: flow.version, file, publishedAt: this.now(), source };
    const entry = this.entries.get(flow.name);
    if (!entry) {
      this.entries.set(flow.name, {
        name: flow.name,
        file,
        newest: flow,
        deleted: false,
        versions: new Map([[flow.version, flow]]),
        history: [record],
      });
      return;
    }
    const before = entry.deleted ? undefined : this.currentOf(entry).version;
    if (before !== undefined && before !== flow.version) entry.previous = before;
    if (entry.previous === flow.version) entry.previous = undefined;
    const loaded = entry.versions.get(flow.version);
    if (!loaded) entry.versions.set(flow.version, flow);
    entry.newest = loaded ?? flow;
    entry.pinned = undefined;
    entry.deleted = false;
    entry.file = file;
    entry.history.push(record);
  }

  /**
   * Adds a version another instance published (fetched from the shared store) for the calls
   * pinned to it: loaded, recorded, never made current.
   */
  adopt(flow: CompiledFlow, file: string, source: string): void {
    const e = this.entries.get(flow.name);
    if (!e) {
      // a flow this instance does not serve (yet): its version serves the calls on it only
      this.entries.set(flow.name, {
        name: flow.name,
        file,
        newest: flow,
        deleted: true,
        versions: new Map([[flow.version, flow]]),
        history: [{ version: flow.version, file, publishedAt: this.now(), source }],
      });
      return;
    }
    if (!e.versions.has(flow.version)) e.versions.set(flow.version, flow);
    if (!e.history.some((r) => r.version === flow.version && r.source !== ''))
      e.history.push({ version: flow.version, file, publishedAt: this.now(), source });
  }

  /** The source text of a version published here, if kept. */
  sourceOf(name: string, version: string): { file: string; text: string } | undefined {
    const rec = [...(this.entries.get(name)?.history ?? [])]
      .reverse()
      .find((r) => r.version === version && r.source !== '');
    return rec ? { file: rec.file, text: rec.source } : undefined;
  }

  /** The version new calls of `name` get, the canary aside. */
  current(name: string): CompiledFlow | undefined {
    const e = this.entries.get(name);
    return e && !e.deleted ? this.currentOf(e) : undefined;
  }

  /** The version a new call gets, the canary included. */
  pick(name: string, callid: string): CompiledFlow | undefined {
    const e = this.entries.get(name);
    if (!e || e.deleted) return undefined;
    const base = e.pinned ?? e.previous;
    if (e.canary === undefined || base === undefined || base === e.newest.version) return this.currentOf(e);
    const other = e.versions.get(base);
    if (!other) return this.currentOf(e);
    return toCanary(this.roll(callid, name), e.canary) ? e.newest : other;
  }

  /** A given version (a live call's). */
  get(name: string, version: string): CompiledFlow | undefined {
    return this.entries.get(name)?.versions.get(version);
  }

  /** A flow that takes new calls. */
  has(name: string): boolean {
    const e = this.entries.get(name);
    return !!e && !e.deleted;
  }

  list(): { name: string; version: string; file: string }[] {
    return [...this.entries.values()]
      .filter((e) => !e.deleted)
      .map((e) => ({ name: e.name, version: this.currentOf(e).version, file: basename(e.file) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Every flow, deleted ones included (read-only views for the admin API). */
  entriesList(): readonly FlowEntry[] {
    return [...this.entries.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  entry(name: string): FlowEntry | undefined {
    return this.entries.get(name);
  }

  /** Pending errors of refused files, by file path. */
  pendingErrors(): ReadonlyMap<string, Diagnostic[]> {
    return this.pending;
  }

  /** Pins (rolls back) the version new calls get; the newest version unpins. Clears the flow's canary. */
  setCurrent(name: string, version: string): 'ok' | 'UNKNOWN_FLOW' | 'UNKNOWN_VERSION' {
    const e = this.entries.get(name);
    if (!e || e.deleted) return 'UNKNOWN_FLOW';
    if (!e.versions.has(version)) {
      const rec = [...e.history].reverse().find((r) => r.version === version && r.source !== '');
      if (!rec) return 'UNKNOWN_VERSION';
      const { flows } = compileAll([{ file: rec.file, text: rec.source }], {
        ...(this.maxFileBytes === undefined ? {} : { maxFileBytes: this.maxFileBytes }),
        ...(this.environment === undefined ? {} : { environment: this.environment }),
      });
      const flow = flows.find((f) => f.name === name);
      if (!flow || flow.version !== version) return 'UNKNOWN_VERSION';
      e.versions.set(version, flow);
    }
    e.pinned = version === e.newest.version ? undefined : version;
    e.canary = undefined;
    return 'ok';
  }

  /** Sets (0..100) or clears (undefined) the flow's canary. */
  setCanary(name: string, percent: number | undefined): 'ok' | 'UNKNOWN_FLOW' {
    const e = this.entries.get(name);
    if (!e || e.deleted) return 'UNKNOWN_FLOW';
    e.canary = percent;
    return 'ok';
  }

  /** Versions kept loaded whatever the live calls: the newest, pinned, and the canary's base (none once deleted). */
  private kept(e: FlowEntry, version: string): boolean {
    return !e.deleted && (version === e.newest.version || version === e.pinned || version === e.previous);
  }

  /**
   * Unloads versions that no live call uses and that are not kept; forgets deleted flows with none left. It runs each
   * time a call ends: nothing is copied (a Map's iteration goes on past the entries deleted behind it).
   */
  release(live: LiveView): { name: string; version: string }[] {
    const out: { name: string; version: string }[] = [];
    for (const e of this.entries.values()) {
      for (const v of e.versions.keys()) {
        if (this.kept(e, v) || live.count(e.name, v) > 0) continue;
        e.versions.delete(v);
        out.push({ name: e.name, version: v });
      }
      if (e.deleted && e.versions.size === 0) this.entries.delete(e.name);
    }
    return out;
  }

  private currentOf(e: FlowEntry): CompiledFlow {
    return (e.pinned !== undefined ? e.versions.get(e.pinned) : undefined) ?? e.newest;
  }
}

function dirMissing(dir: string, err: unknown): Diagnostic {
  return {
    code: 'FLOWS_DIR_MISSING',
    severity: 'error',
    message: `cannot read the flows directory ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    file: dir,
    line: 1,
    column: 1,
    hint: 'Create it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.',
  };
}

export { dirMissing };
