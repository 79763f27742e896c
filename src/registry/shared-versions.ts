/**
 * The registry of one instance kept in step with the others through the shared store
 * (src/store/shared.ts), so that any instance serves any call:
 *
 * - every version this instance keeps (newest, pinned, the canary's base) has its source in
 *   the store, and every version its live calls use is kept there, for `ttlMs` after the
 *   last sync tick that saw it (then it expires: no call can need it any more);
 * - a call pinned to a version this instance never loaded (it started on another instance,
 *   possibly one running an older deploy) gets it fetched and compiled: `fetch`;
 * - pins (rollbacks) and canaries set through any instance's admin API are applied by all,
 *   at once through the store's announcements and at every tick in any case; a version
 *   published here clears the flow's shared pin, as a publish clears the local one;
 * - calls and errors per version are counted in the store: the admin API of any instance
 *   shows the totals.
 *
 * The store's trouble is logged, never thrown at a caller: an instance that cannot reach
 * Redis answers its requests 503 anyway (the call store is the same Redis).
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { CheckOptions } from '../flow/check.js';
import type { FlowControl, SharedRecords, VersionCounts } from '../store/shared.js';
import { countKey } from '../store/shared.js';
import { compileAll } from './files.js';
import type { LiveCalls } from './live.js';
import type { Registry } from './registry.js';

export interface SyncLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface SharedVersionsOptions {
  /** How long a version's source outlives the last tick that needed it (default: the call TTL). */
  ttlMs: number;
  /** Ticks: sources kept, controls applied, counts added (default 5 s). */
  intervalMs?: number;
  check?: CheckOptions;
  log: SyncLog;
}

export class SharedVersions {
  private timer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  /** The counts already added to the store, per version (the local counts only grow). */
  private readonly added = new Map<string, VersionCounts>();
  /** The newest version of each flow at the last tick: a new one clears the flow's shared pin. */
  private readonly newestSeen = new Map<string, string>();
  private totals = new Map<string, VersionCounts>();
  private ticking: Promise<void> | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly live: LiveCalls,
    private readonly shared: SharedRecords,
    private readonly opts: SharedVersionsOptions,
  ) {
    for (const e of registry.entriesList()) this.newestSeen.set(e.name, e.newest.version);
  }

  /** Runs a tick now, then every intervalMs, and applies announced control changes at once. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 5000);
    this.timer.unref();
    this.stopWatch = this.shared.watchControls(
      () => void this.applyControls().catch((err: unknown) => this.trouble(err, 'applying the shared controls')),
    );
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.stopWatch?.();
  }

  /** One sync: sources kept, controls applied, counts added and read back. Never throws. */
  tick(): Promise<void> {
    this.ticking ??= this.tickOnce().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    try {
      await this.keepSources();
      await this.clearPinsOfNewVersions();
      await this.applyControls();
      await this.syncCounts();
    } catch (err) {
      this.trouble(err, 'a sync with the shared store');
    }
  }

  /** A version this instance does not have (a live call's): from the store, compiled, adopted. */
  async fetch(name: string, version: string): Promise<CompiledFlow | undefined> {
    const have = this.registry.get(name, version);
    if (have) return have;
    const src = await this.shared.getSource(version);
    if (!src) return undefined;
    const { flows } = compileAll([{ file: src.file, text: src.text }], this.opts.check ?? {});
    const flow = flows.find((f) => f.name === name);
    if (!flow || flow.version !== version) {
      this.opts.log.warn(
        { code: 'FLOW_VERSION_FETCHED', flow: name, version },
        `the shared source of ${name}@${version} does not compile to that version here: not used`,
      );
      return undefined;
    }
    this.registry.adopt(flow, src.file, src.text);
    this.opts.log.info(
      { code: 'FLOW_VERSION_FETCHED', flow: name, version },
      `flow ${name} version ${version} fetched from the shared store for a call that started on another instance`,
    );
    return flow;
  }

  /** Pins (rollback) or unpins a flow on every instance. */
  async setPin(name: string, version: string | null): Promise<void> {
    const e = this.registry.entry(name);
    await this.shared.setControl(name, {
      pin: version === null || version === e?.newest.version ? null : version,
      canary: null,
    });
  }

  /** Sets or clears a flow's canary on every instance. */
  async setCanary(name: string, percent: number | null): Promise<void> {
    const e = this.registry.entry(name);
    await this.shared.setControl(name, { pin: e?.pinned ?? null, canary: percent });
  }

  /** Calls and errors of a version, on every instance, as of the last sync (`refresh` first for a fresh one). */
  statsFor(name: string, version: string): VersionCounts {
    const t = this.totals.get(countKey(name, version)) ?? { calls: 0, errors: 0 };
    // what this instance counted since its last sync, not in the totals yet
    const here = [...this.live.allStats()].find(([f, v]) => f === name && v === version)?.[2];
    const sent = this.added.get(countKey(name, version)) ?? { calls: 0, errors: 0 };
    return {
      calls: t.calls + Math.max(0, (here?.calls ?? 0) - sent.calls),
      errors: t.errors + Math.max(0, (here?.errors ?? 0) - sent.errors),
    };
  }

  /** Counts added and read back now (the admin API answers with the same totals on any instance). */
  async refresh(): Promise<void> {
    await this.syncCounts().catch((err: unknown) => this.trouble(err, 'reading the shared counts'));
  }

  private async keepSources(): Promise<void> {
    const ttl = this.opts.ttlMs;
    const kept = new Set<string>();
    for (const e of this.registry.entriesList()) {
      for (const v of [e.newest.version, e.pinned, e.previous]) {
        if (v === undefined || kept.has(v)) continue;
        const src = this.registry.sourceOf(e.name, v);
        if (src) {
          await this.shared.putSource(v, src.file, src.text, ttl);
          kept.add(v);
        }
      }
    }
    await this.shared.touch(
      [...this.live.inUse()].map(([, v]) => v).filter((v) => !kept.has(v)),
      ttl,
    );
  }

  private async clearPinsOfNewVersions(): Promise<void> {
    const controls = await this.shared.getControls();
    for (const e of this.registry.entriesList()) {
      if (e.deleted) continue;
      const seen = this.newestSeen.get(e.name);
      this.newestSeen.set(e.name, e.newest.version);
      if (seen === undefined || seen === e.newest.version) continue;
      const c = controls.get(e.name);
      if (c?.pin) await this.shared.setControl(e.name, { pin: null, canary: c.canary });
    }
  }

  /** Makes the local pins and canaries those of the store. */
  async applyControls(): Promise<void> {
    const controls = await this.shared.getControls();
    for (const [name, c] of controls) await this.apply(name, c);
  }

  private async apply(name: string, c: FlowControl): Promise<void> {
    const e = this.registry.entry(name);
    if (!e || e.deleted) return;
    if ((e.pinned ?? null) !== c.pin) {
      const target = c.pin ?? e.newest.version;
      if (!this.registry.get(name, target) && c.pin) await this.fetch(name, c.pin);
      if (this.registry.setCurrent(name, target) !== 'ok')
        this.opts.log.warn(
          { code: 'FLOW_PINNED', flow: name, version: c.pin },
          `the shared pin of ${name} names version ${c.pin}, which cannot be loaded here: not applied`,
        );
    }
    if ((e.canary ?? null) !== c.canary) this.registry.setCanary(name, c.canary ?? undefined);
  }

  private async syncCounts(): Promise<void> {
    const deltas: [string, string, number, number][] = [];
    const now: [string, VersionCounts][] = [];
    for (const [flow, version, st] of this.live.allStats()) {
      const k = countKey(flow, version);
      const sent = this.added.get(k) ?? { calls: 0, errors: 0 };
      const calls = Math.max(0, st.calls - sent.calls);
      const errors = Math.max(0, st.errors - sent.errors);
      if (calls > 0 || errors > 0) deltas.push([flow, version, calls, errors]);
      now.push([k, { calls: sent.calls + calls, errors: sent.errors + errors }]);
    }
    await this.shared.addCounts(deltas);
    // counted as added only once the store has them
    for (const [k, c] of now) this.added.set(k, c);
    this.totals = await this.shared.getCounts();
  }

  private trouble(err: unknown, what: string): void {
    this.opts.log.warn(
      { code: 'STORE_UNAVAILABLE', err: err instanceof Error ? err.message : String(err) },
      `${what} failed: retried at the next tick`,
    );
  }
}
