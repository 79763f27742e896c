/**
 * What the instances serving the same calls share in Redis, besides the calls: the source
 * of each published flow version (by its content hash, kept while calls may use it), the
 * controls set through the admin API (a flow's pinned version, its canary), and the
 * per-version counts of calls and errors. The texts are opaque here: the registry
 * (src/registry/shared-versions.ts) compiles and applies them.
 *
 * Keys, under the store's prefix: `flow:{<version>}` (hash: text, file), `controls` (hash:
 * flow -> JSON), `counts` (hash: "<flow>@<version>:calls|errors" -> n); changes of the
 * controls are announced on the channel `events`.
 */
import type { Cluster, Redis } from 'ioredis';
import { StoreUnavailable } from './types.js';

export interface FlowControl {
  /** The version new calls get instead of the newest (a rollback), or null. */
  pin: string | null;
  /** Percent of new calls sent to the newest version, or null. */
  canary: number | null;
}

export interface VersionCounts {
  calls: number;
  errors: number;
}

export interface SharedRecords {
  putSource(version: string, file: string, text: string, ttlMs: number): Promise<void>;
  getSource(version: string): Promise<{ file: string; text: string } | undefined>;
  /** Keeps these versions' sources another `ttlMs`. */
  touch(versions: readonly string[], ttlMs: number): Promise<void>;
  getControls(): Promise<Map<string, FlowControl>>;
  setControl(flow: string, control: FlowControl): Promise<void>;
  /** Adds to the counts of versions: [flow, version, calls, errors]. */
  addCounts(deltas: readonly [string, string, number, number][]): Promise<void>;
  getCounts(): Promise<Map<string, VersionCounts>>;
  /** Calls `onChange` when another instance changes the controls; returns a stop function. */
  watchControls(onChange: () => void): () => void;
}

export const countKey = (flow: string, version: string) => `${flow}@${version}`;

export class RedisShared implements SharedRecords {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
    /** Runs a Redis operation within the store's command timeout (it fails `Command timed out`). */
    private readonly timed: <T>(op: () => Promise<T>) => Promise<T>,
  ) {}

  async putSource(version: string, file: string, text: string, ttlMs: number): Promise<void> {
    const key = this.sourceKey(version);
    await this.run(() =>
      this.redis
        .multi()
        .hset(key, 'text', text, 'file', file)
        .pexpire(key, Math.max(1, Math.round(ttlMs)))
        .exec(),
    );
  }

  async getSource(version: string): Promise<{ file: string; text: string } | undefined> {
    const r = await this.run(() => this.redis.hmget(this.sourceKey(version), 'text', 'file'));
    const text = r[0] ?? null;
    return text === null ? undefined : { text, file: r[1] ?? `${version}.yaml` };
  }

  async touch(versions: readonly string[], ttlMs: number): Promise<void> {
    if (versions.length === 0) return;
    const p = this.redis.pipeline();
    for (const v of versions) p.pexpire(this.sourceKey(v), Math.max(1, Math.round(ttlMs)));
    await this.run(() => p.exec());
  }

  async getControls(): Promise<Map<string, FlowControl>> {
    const all = await this.run(() => this.redis.hgetall(`${this.prefix}controls`));
    const out = new Map<string, FlowControl>();
    for (const [flow, json] of Object.entries(all)) {
      try {
        const c = JSON.parse(json) as FlowControl;
        out.set(flow, {
          pin: typeof c.pin === 'string' ? c.pin : null,
          canary: typeof c.canary === 'number' ? c.canary : null,
        });
      } catch {
        // a record written by something else: ignored
      }
    }
    return out;
  }

  async setControl(flow: string, control: FlowControl): Promise<void> {
    await this.run(() => this.redis.hset(`${this.prefix}controls`, flow, JSON.stringify(control)));
    await this.run(() => this.redis.publish(`${this.prefix}events`, `controls ${flow}`));
  }

  async addCounts(deltas: readonly [string, string, number, number][]): Promise<void> {
    if (deltas.length === 0) return;
    const key = `${this.prefix}counts`;
    const p = this.redis.pipeline();
    for (const [flow, version, calls, errors] of deltas) {
      if (calls) p.hincrby(key, `${countKey(flow, version)}:calls`, calls);
      if (errors) p.hincrby(key, `${countKey(flow, version)}:errors`, errors);
    }
    await this.run(() => p.exec());
  }

  async getCounts(): Promise<Map<string, VersionCounts>> {
    const all = await this.run(() => this.redis.hgetall(`${this.prefix}counts`));
    const out = new Map<string, VersionCounts>();
    for (const [field, n] of Object.entries(all)) {
      const at = field.lastIndexOf(':');
      const k = field.slice(0, at);
      const c = out.get(k) ?? { calls: 0, errors: 0 };
      if (field.slice(at + 1) === 'calls') c.calls = Number(n);
      else c.errors = Number(n);
      out.set(k, c);
    }
    return out;
  }

  watchControls(onChange: () => void): () => void {
    const sub = this.redis.duplicate();
    sub.on('error', () => {});
    sub.on('message', () => onChange());
    void sub.subscribe(`${this.prefix}events`).catch(() => undefined);
    return () => sub.disconnect();
  }

  private sourceKey(version: string): string {
    return `${this.prefix}flow:{${version}}`;
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await this.timed(op);
    } catch (err) {
      throw new StoreUnavailable(`Redis: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
