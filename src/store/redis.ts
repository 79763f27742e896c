/**
 * The call store in Redis (ioredis), shared by every instance serving the same calls.
 *
 * One hash per call, `<prefix>call:{<callid>}` (the braces are a Redis Cluster hash tag:
 * every key of a call is in one slot): `v` the value, `r` its revision, `f` the aside.
 * Loads and commits are Lua scripts, so each is one round trip and atomic:
 * - load: HMGET v r f, and HDEL f when there was one (the aside is taken);
 * - commit: compares `r` with the revision read, writes `v` and `r`+1 and the expiry, or
 *   changes nothing.
 * The call history (paths of live calls, finished records) is in ./redis-history.ts, the
 * delivery status of SMS and the webhook event claims in ./redis-sms.ts, the queues' lines and
 * agents in ./redis-queues.ts; outbound calls placed by the server are strings
 * `<prefix>outbound:{<id>}` with their expiry.
 * Commands sent in one turn of the event loop go to Redis together (ioredis's
 * autopipelining: one write instead of one per command, and far less of Redis's CPU).
 * No lock is taken anywhere: an instance killed between a load and a commit leaves nothing
 * behind that another must wait for.
 *
 * Redis trouble fails fast: no offline queue (a command while disconnected fails at once),
 * one attempt per command; the client reconnects in the background. Every failure is a
 * StoreUnavailable error: the request is answered 503 and nothing of it is half-written (a
 * step writes once, with its commit). Each command's outcome is noted (./faults.ts), for
 * GET /health: writes refused (OOM under `noeviction`, READONLY, NOREPLICAS, MISCONF) stand
 * until a write succeeds, other failures until a command does. A command Redis does not
 * answer within `commandTimeoutMs` fails too, but a call step's own (its record's load and
 * commit, a fallback's note): Redis stalled (paused, overloaded) answers them when it comes
 * back, and the call step waits for them while the call can ride the stall
 * (src/engine/stall.ts). A command timed out is not withdrawn: Redis still runs it if it
 * comes back, as it would for any client that gave up on one.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import {
  StoreUnavailable,
  type CallStore,
  type FinishedExtra,
  type LoadedCall,
  type PathAppend,
  type PathCount,
  type SmsStatusStore,
  type StoredPath,
  type StoreCapabilities,
} from './types.js';
import { StoreFaults, type StoreFault } from './faults.js';
import { RedisShared } from './shared.js';
import { RedisHistory, callKey } from './redis-history.js';
import { RedisSmsStatus } from './redis-sms.js';
import { RedisQueues } from './redis-queues.js';

const LOAD = `
local r = redis.call('HMGET', KEYS[1], 'v', 'r', 'f')
if r[3] and ARGV[1] ~= 'keep' then redis.call('HDEL', KEYS[1], 'f') end
return r`;

const COMMIT = `
local cur = redis.call('HMGET', KEYS[1], 'v', 'r')
local has = cur[1] ~= false
if ARGV[1] == '' then
  if has then return 0 end
elseif not has or tonumber(cur[2]) ~= tonumber(ARGV[1]) then
  return 0
end
local n = (tonumber(cur[2]) or 0) + 1
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', n)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return n`;

const SET = `
local n = redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HSET', KEYS[1], 'v', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n`;

const ASIDE = `
redis.call('HSET', KEYS[1], 'f', ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** Where Redis is: a URL, a Redis Cluster (its nodes' URLs), or Sentinels and a master name. */
export type RedisTarget =
  string | { cluster: string[] } | { sentinels: { host: string; port: number }[]; name: string };

export interface RedisStoreOptions {
  /** Prepended to every key, so several deployments can share one Redis. Default `callscript:`. */
  prefix?: string;
  /**
   * A command that takes longer fails (StoreUnavailable), but a call step's load and commit, and a fallback's note:
   * the call step bounds its waits for those itself (src/engine/stall.ts). Default 1000 ms.
   */
  commandTimeoutMs?: number;
  /** More ioredis options (TLS, Sentinel: `sentinels` and `name`, username...); commandTimeout: commandTimeoutMs. */
  redis?: RedisOptions;
}

type Scripted = (Redis | Cluster) & {
  csLoad(key: string, keep: string): Promise<[string | null, string | null, string | null]>;
  csCommit(key: string, rev: string, value: string, ttl: number): Promise<number>;
  csSet(key: string, value: string, ttl: number): Promise<number>;
  csAside(key: string, aside: string, ttl: number): Promise<number>;
};

export const DEFAULT_REDIS_PREFIX = 'callscript:';

/** No timeout for the command: a call step's own, which the step bounds itself (src/engine/stall.ts). */
const UNTIMED = Infinity;

/**
 * The health check writes its probe (the key `health`) unless a write succeeded within this long (ms) with no fault
 * since: then it pings.
 */
export const HEALTH_WRITE_AFTER_MS = 5000;

/**
 * Error replies of a Redis that answers but takes no write: out of memory (noeviction), a replica, too few replicas,
 * a failed snapshot.
 */
const WRITES_REFUSED = new Set(['OOM', 'READONLY', 'NOREPLICAS', 'MISCONF']);

/** What a failed command met: its kind, Redis's code (the reply's first word) or the socket's, and the message. */
export function faultOf(err: unknown): Pick<StoreFault, 'kind' | 'code' | 'message'> {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  // a script's error ends with where it was raised: "script: <sha1>, on @user_script:10."
  const text = (typeof e.message === 'string' ? e.message : String(err)).replace(
    / script: [0-9a-f]{40}, on @user_script:\d+\.$/,
    '',
  );
  const message = `Redis: ${text}`;
  if (e.name === 'ReplyError') {
    // Redis 7 gives a script's error as is; Redis 6 as "ERR Error running script ... @user_script:10: -OOM ..."
    const code = /@user_script:\d+: -([A-Z]+) /.exec(text)?.[1] ?? /^[A-Z]+(?= )/.exec(text)?.[0];
    return { kind: code && WRITES_REFUSED.has(code) ? 'writes_refused' : 'error', ...(code ? { code } : {}), message };
  }
  if (/timed out/i.test(text)) return { kind: 'timeout', message };
  return { kind: 'unreachable', ...(typeof e.code === 'string' ? { code: e.code } : {}), message };
}

export class RedisStore implements CallStore, SmsStatusStore {
  readonly prefix: string;
  /** Shared by the instances on the same Redis: calls, and flow versions, pins, canaries and counts. */
  readonly capabilities: StoreCapabilities = {
    shared: true,
    sharedRecords: () => new RedisShared(this.client, this.prefix, (op) => this.timed(op)),
    queues: () => this.queueLines,
    ready: (timeoutMs) => this.ready(timeoutMs),
    health: () => this.health(),
  };
  private readonly redis: Scripted;
  /** What the commands met lately (GET /health). */
  private readonly faults = new StoreFaults();
  private readonly history: RedisHistory;
  private readonly smsStatusStore: RedisSmsStatus;
  private readonly queueLines: RedisQueues;
  private readonly commandTimeoutMs: number;

  /** `target`: redis://[user:password@]host:port[/db] (rediss:// for TLS), a Cluster, or Sentinels. */
  constructor(target: RedisTarget, opts: RedisStoreOptions = {}) {
    this.prefix = opts.prefix ?? DEFAULT_REDIS_PREFIX;
    // the timeout is this store's (timed), not the client's: a call step's own commands are not timed out
    const { commandTimeout, ...more } = opts.redis ?? {};
    this.commandTimeoutMs = commandTimeout ?? opts.commandTimeoutMs ?? 1000;
    const options: RedisOptions = {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(50 * times, 1000),
      ...more,
    };
    const redis =
      typeof target === 'string'
        ? new Redis(target, options)
        : 'cluster' in target
          ? new Cluster(target.cluster, {
              redisOptions: options,
              enableOfflineQueue: false,
              enableAutoPipelining: true,
              clusterRetryStrategy: (times) => Math.min(50 * times, 1000),
            })
          : new Redis({ ...options, sentinels: target.sentinels, name: target.name });
    // errors are reported by the commands that fail; an unhandled 'error' event would crash
    redis.on('error', () => {});
    redis.defineCommand('csLoad', { numberOfKeys: 1, lua: LOAD });
    redis.defineCommand('csCommit', { numberOfKeys: 1, lua: COMMIT });
    redis.defineCommand('csSet', { numberOfKeys: 1, lua: SET });
    redis.defineCommand('csAside', { numberOfKeys: 1, lua: ASIDE });
    this.redis = redis as Scripted;
    this.history = new RedisHistory(redis, this.prefix, (op) => this.run(op));
    this.smsStatusStore = new RedisSmsStatus(redis, this.prefix, (op) => this.run(op));
    // a queue's script writes (the caller's last poll) whatever it answers
    this.queueLines = new RedisQueues(redis, this.prefix, (op) => this.run(op, WROTE));
  }

  /** The client, for the other shared records (flow versions, pins, counts). */
  get client(): Redis | Cluster {
    return this.redis;
  }

  /** Resolves once connected (or rejects after `timeoutMs`); commands before that fail fast. */
  async ready(timeoutMs = 3000): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => {
        cleanup();
        reject(new StoreUnavailable(`Redis did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const ok = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(t);
        this.redis.off('ready', ok);
      };
      this.redis.on('ready', ok);
    });
  }

  key(callid: string): string {
    return callKey(this.prefix, callid);
  }

  async load(callid: string, keepAside = false): Promise<LoadedCall> {
    const load = () => this.redis.csLoad(this.key(callid), keepAside ? 'keep' : 'take');
    const [v, r, f] = await this.run(load, NONE, UNTIMED);
    const out: LoadedCall = {};
    if (v !== null) out.call = { value: v, rev: Number(r) };
    if (f !== null) out.aside = f;
    return out;
  }

  async commit(callid: string, rev: number | undefined, value: string, ttlMs: number): Promise<number | undefined> {
    const n = await this.run(
      () =>
        this.redis.csCommit(
          this.key(callid),
          rev === undefined ? '' : String(rev),
          value,
          Math.max(1, Math.round(ttlMs)),
        ),
      // a lost compare-and-set writes nothing: it says nothing of whether writes are taken
      (n) => n !== 0,
      UNTIMED,
    );
    return n === 0 ? undefined : n;
  }

  async setAside(callid: string, aside: string, ttlMs: number): Promise<void> {
    await this.run(() => this.redis.csAside(this.key(callid), aside, Math.max(1, Math.round(ttlMs))), WROTE, UNTIMED);
  }

  /**
   * One HGET of `r` a call, sent together (`r` is written with each value, and only then: a record holding only an
   * aside has none).
   */
  async revisions(callids: readonly string[]): Promise<(number | undefined)[]> {
    if (callids.length === 0) return [];
    const revs = await this.run(() => Promise.all(callids.map((callid) => this.redis.hget(this.key(callid), 'r'))));
    return revs.map((r) => (r === null ? undefined : Number(r)));
  }

  async get(callid: string): Promise<string | undefined> {
    return (await this.run(() => this.redis.hget(this.key(callid), 'v'))) ?? undefined;
  }

  async set(callid: string, value: string, ttlMs: number): Promise<void> {
    await this.run(() => this.redis.csSet(this.key(callid), value, Math.max(1, Math.round(ttlMs))), WROTE);
  }

  async delete(callid: string): Promise<void> {
    await this.run(() => this.redis.del(this.key(callid)));
  }

  /** Calls with a value, by a SCAN of this prefix's call keys: O(calls), for health and tests. */
  async size(): Promise<number> {
    let n = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.run(() =>
        this.redis.scan(cursor, 'MATCH', `${this.prefix}call:*`, 'COUNT', 1000),
      );
      cursor = next;
      if (keys.length > 0) {
        const has = await this.run(() => Promise.all(keys.map((k) => this.redis.hexists(k, 'v'))));
        n += has.filter((x) => x === 1).length;
      }
    } while (cursor !== '0');
    return n;
  }

  appendPath(callid: string, entry: string, maxEntries: number, ttlMs: number): Promise<void> {
    return this.history.appendPaths([{ callid, entry }], maxEntries, ttlMs);
  }

  appendPaths(entries: readonly PathAppend[], maxEntries: number, ttlMs: number, maxBytes?: number): Promise<void> {
    return this.history.appendPaths(entries, maxEntries, ttlMs, maxBytes);
  }

  countPaths(counts: readonly PathCount[], maxBytes?: number): Promise<void> {
    return this.history.countPaths(counts, maxBytes);
  }

  readPath(callid: string): Promise<string[]> {
    return this.history.readPath(callid);
  }

  loadPath(callid: string): Promise<StoredPath> {
    return this.history.loadPath(callid);
  }

  dropPath(callid: string): Promise<void> {
    return this.history.dropPath(callid);
  }

  addFinished(callid: string, record: string, keep: number, ttlMs: number, extra?: FinishedExtra): Promise<void> {
    return this.history.addFinished(callid, record, keep, ttlMs, extra);
  }

  listFinished(offset: number, limit: number): Promise<string[]> {
    return this.history.listFinished(offset, limit);
  }

  listFinishedRows(offset: number, limit: number): Promise<string[]> {
    return this.history.listFinishedRows(offset, limit);
  }

  getFinished(callid: string): Promise<string | undefined> {
    return this.history.getFinished(callid);
  }

  listLive(cursor: string | undefined, limit: number): Promise<{ values: [string, string][]; next?: string }> {
    return this.history.listLive(cursor, limit);
  }

  smsSent(hash: string, sent: string, ttlMs: number): Promise<void> {
    return this.smsStatusStore.smsSent(hash, sent, ttlMs);
  }

  smsReport(hash: string, eventId: string, report: string, maxReports: number, ttlMs: number): Promise<boolean> {
    return this.smsStatusStore.smsReport(hash, eventId, report, maxReports, ttlMs);
  }

  smsStatus(hash: string): Promise<{ sent?: string; reports: string[] } | undefined> {
    return this.smsStatusStore.smsStatus(hash);
  }

  claimEvent(eventId: string, ttlMs: number): Promise<boolean> {
    return this.smsStatusStore.claimEvent(eventId, ttlMs);
  }

  releaseEvent(eventId: string): Promise<void> {
    return this.smsStatusStore.releaseEvent(eventId);
  }

  /** An outbound call's record: a string `<prefix>outbound:{<id>}` with its expiry. */
  outboundKey(id: string): string {
    return `${this.prefix}outbound:{${id}}`;
  }

  async putOutbound(id: string, record: string, ttlMs: number): Promise<void> {
    await this.run(() => this.redis.set(this.outboundKey(id), record, 'PX', Math.max(1, Math.round(ttlMs))), WROTE);
  }

  async getOutbound(id: string): Promise<string | undefined> {
    return (await this.run(() => this.redis.get(this.outboundKey(id)))) ?? undefined;
  }

  async ping(): Promise<void> {
    await this.run(() => this.redis.ping());
  }

  /**
   * The fault the store is in (undefined: it serves), after a check of its own: a write of the key `health` (kept a
   * minute) unless a write succeeded within HEALTH_WRITE_AFTER_MS with no fault since, else a ping. So a store that
   * refuses writes is seen without traffic, and seen serving again once a write succeeds.
   */
  async health(): Promise<StoreFault | undefined> {
    const check = this.faults.wroteWithin(HEALTH_WRITE_AFTER_MS)
      ? this.run(() => this.redis.ping())
      : this.run(() => this.redis.set(`${this.prefix}health`, String(Date.now()), 'PX', 60_000), WROTE);
    await check.catch(() => undefined);
    return this.faults.current();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /**
   * Runs a command within commandTimeoutMs (`timeoutMs` UNTIMED: a call step's own), its outcome noted (`wrote`:
   * whether its result shows a write was taken); a failure is a StoreUnavailable.
   */
  private async run<T>(op: () => Promise<T>, wrote: (result: T) => boolean = NONE, timeoutMs?: number): Promise<T> {
    let result: T;
    try {
      result = await this.timed(op, timeoutMs);
    } catch (err) {
      const fault = faultOf(err);
      this.faults.met(fault);
      throw new StoreUnavailable(fault.message);
    }
    this.faults.served(wrote(result));
    return result;
  }

  /** `op`, failed `Command timed out` when Redis does not answer within commandTimeoutMs (UNTIMED: waited for). */
  private timed<T>(op: () => Promise<T>, timeoutMs = this.commandTimeoutMs): Promise<T> {
    const work = op();
    if (timeoutMs === UNTIMED) return work;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Command timed out')), timeoutMs);
    });
    return Promise.race([work, timedOut]).finally(() => clearTimeout(timer));
  }
}

const WROTE = () => true;
const NONE = () => false;
