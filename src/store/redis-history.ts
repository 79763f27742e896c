/**
 * The call history in Redis (see HistoryStore in ./types.ts), beside the calls of RedisStore:
 *
 * - a live call's path: a list `<prefix>path:{<callid>}` (the call's hash tag: the same
 *   Redis Cluster slot as its state), appended with RPUSH, LTRIM to its last entries and
 *   PEXPIRE in one MULTI;
 * - a finished call's record: a string `<prefix>done:{<callid>}` with its own expiry;
 * - their order: a sorted set `<prefix>history:{index}` of callids scored by a counter
 *   `<prefix>history:{index}:seq` (one slot: one Lua script adds and trims atomically, and
 *   answers the callids trimmed, whose records are then deleted). Records that expired are
 *   taken out of the index when a listing meets them.
 *
 * Live calls are listed with SCAN over the call keys (every master of a Cluster, in turn),
 * reading each key's value; the callids of a batch that did not fit in a page are kept for
 * the next page as a string `<prefix>page:{<token>}` (see listLive).
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BadCursor, type PathAppend } from './types.js';

const HISTORY_ADD = `
local s = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[1], s, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
local keep = tonumber(ARGV[2])
if n > keep then
  local old = redis.call('ZRANGE', KEYS[1], 0, n - keep - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - keep - 1)
  return old
end
return {}`;

/** Appends to a path, keeps its last ARGV[2] entries, sets its expiry: one command per entry. */
const PATH_APPEND = `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

type Client = Redis | Cluster;
type Scripted = Client & {
  csHistoryAdd(index: string, seq: string, callid: string, keep: number, ttl: number): Promise<string[]>;
  csPathAppend(key: string, entry: string, max: number, ttl: number): Promise<number>;
};

/** A call's key: a hash `<prefix>call:{<callid>}` (the braces: its Redis Cluster hash tag). */
export function callKey(prefix: string, callid: string): string {
  return `${prefix}call:{${callid}}`;
}

/** How long the rest of a SCAN batch that did not fit in a page is kept for the next page. */
export const PAGE_REST_MS = 10 * 60_000;

/**
 * SCAN calls of one live listing page, at most: a page of a Redis holding few calls among millions of other keys
 * answers in bounded time (with fewer calls than asked, and its cursor).
 */
export const MAX_SCANS_PER_PAGE = 64;

/** Rounds of a listing that met expired records (each round takes them out of the index). */
const LIST_ROUNDS = 10;

export class RedisHistory {
  private readonly redis: Scripted;
  private readonly cluster: boolean;

  constructor(
    redis: Client,
    private readonly prefix: string,
    /** Runs a Redis operation within the store's command timeout, turning a failure into StoreUnavailable. */
    private readonly run: <T>(op: () => Promise<T>) => Promise<T>,
  ) {
    redis.defineCommand('csHistoryAdd', { numberOfKeys: 2, lua: HISTORY_ADD });
    redis.defineCommand('csPathAppend', { numberOfKeys: 1, lua: PATH_APPEND });
    this.redis = redis as Scripted;
    this.cluster = (redis as { isCluster?: boolean }).isCluster === true;
  }

  pathKey(callid: string): string {
    return `${this.prefix}path:{${callid}}`;
  }

  doneKey(callid: string): string {
    return `${this.prefix}done:{${callid}}`;
  }

  private get indexKey(): string {
    return `${this.prefix}history:{index}`;
  }

  /**
   * Appends entries to their calls' paths: one script call per entry (RPUSH, LTRIM, PEXPIRE),
   * all in one pipeline (one round trip; a Cluster routes each to its node instead).
   */
  async appendPaths(entries: readonly PathAppend[], maxEntries: number, ttlMs: number): Promise<void> {
    if (entries.length === 0) return;
    const max = Math.max(1, Math.floor(maxEntries));
    const ttl = ms(ttlMs);
    if (this.cluster) {
      await this.run(() =>
        Promise.all(entries.map((e) => this.redis.csPathAppend(this.pathKey(e.callid), e.entry, max, ttl))),
      );
      return;
    }
    const p = this.redis.pipeline() as unknown as {
      csPathAppend(key: string, entry: string, max: number, ttl: number): void;
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const e of entries) p.csPathAppend(this.pathKey(e.callid), e.entry, max, ttl);
    await this.run(() => p.exec().then(failed));
  }

  async readPath(callid: string): Promise<string[]> {
    return this.run(() => this.redis.lrange(this.pathKey(callid), 0, -1));
  }

  async dropPath(callid: string): Promise<void> {
    await this.run(() => this.redis.del(this.pathKey(callid)));
  }

  async addFinished(callid: string, record: string, keep: number, ttlMs: number): Promise<void> {
    await this.run(() => this.redis.set(this.doneKey(callid), record, 'PX', ms(ttlMs)));
    const old = await this.run(() =>
      this.redis.csHistoryAdd(this.indexKey, `${this.indexKey}:seq`, callid, Math.max(1, Math.floor(keep)), ms(ttlMs)),
    );
    if (old.length > 0) await this.run(() => Promise.all(old.map((id) => this.redis.del(this.doneKey(id)))));
  }

  async listFinished(offset: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    for (let round = 1; ; round++) {
      const ids = await this.run(() => this.redis.zrevrange(this.indexKey, offset, offset + limit - 1));
      if (ids.length === 0) return [];
      // one GET per record (they are in the slots of their callids: no MGET on a Cluster)
      const records = await this.run(() => Promise.all(ids.map((id) => this.redis.get(this.doneKey(id)))));
      const gone = ids.filter((_, i) => records[i] === null);
      const present = records.filter((r): r is string => r !== null);
      if (gone.length === 0 || round === LIST_ROUNDS) return present;
      await this.run(() => this.redis.zrem(this.indexKey, ...gone));
    }
  }

  async getFinished(callid: string): Promise<string | undefined> {
    return (await this.run(() => this.redis.get(this.doneKey(callid)))) ?? undefined;
  }

  /**
   * Cursor `<node>.<scan>.<rest>`: the master to read (a Cluster has several, in a stable
   * order), SCAN's cursor of its next batch (`e` when every master has been read) and the
   * key of the batch's rest (`-` for none). SCAN may answer more calls than a page has room
   * for: the callids left over are kept under `<prefix>page:{<token>}` for PAGE_REST_MS and
   * given first by the next page. A page never re-reads a SCAN cursor it has read already:
   * the same cursor read again may answer other keys (Redis resized its table between the
   * pages: other keys came or went), and a page that skipped "the keys given already" by
   * their place in the batch then listed a call twice and left another out. Here SCAN's own
   * guarantee holds: a call present through the whole walk is listed at least once.
   */
  async listLive(cursor: string | undefined, limit: number): Promise<{ values: [string, string][]; next?: string }> {
    const nodes = this.nodes();
    let node = 0;
    let scan: string | undefined = '0';
    let rest: string[] = [];
    if (cursor !== undefined) {
      const m = /^([0-9]{1,4})\.([0-9]{1,20}|e)\.([0-9a-f]{32}|-)$/.exec(cursor);
      if (!m || Number(m[1]) >= nodes.length || (m[2] === 'e' && m[3] === '-'))
        throw new BadCursor('not a cursor of this store');
      node = Number(m[1]);
      scan = m[2] === 'e' ? undefined : m[2]!;
      if (m[3] !== '-') rest = await this.pageRest(m[3]!);
    }
    const out: [string, string][] = [];
    const head = callKey(this.prefix, '').slice(0, -1); // `<prefix>call:{`
    let scans = 0;
    for (;;) {
      // the rest of the last batch first, then the next batch
      const room = limit - out.length;
      const ids = rest.slice(0, room);
      const over = rest.slice(room);
      const values = await this.run(() => Promise.all(ids.map((id) => this.redis.hget(callKey(this.prefix, id), 'v'))));
      ids.forEach((id, i) => {
        const v = values[i];
        if (v !== null && v !== undefined) out.push([id, v]);
      });
      if (over.length > 0) {
        const token = await this.keepPageRest(over);
        return { values: out, next: `${node}.${scan ?? 'e'}.${token}` };
      }
      if (scan === undefined) return { values: out };
      // full, or enough SCANs for one page (calls may be few among many other keys): the rest on the next page
      if (out.length === limit || scans === MAX_SCANS_PER_PAGE) return { values: out, next: `${node}.${scan}.-` };
      scans++;
      const client = nodes[node]!;
      const at: string = scan;
      const [after, batch] = await this.run(() =>
        client.scan(at, 'MATCH', `${this.prefix}call:*`, 'COUNT', Math.max(10, limit - out.length)),
      );
      // a record holding only an aside has no value: it is left out when its value is read
      rest = batch.filter((k) => k.startsWith(head) && k.endsWith('}')).map((k) => k.slice(head.length, -1));
      if (after !== '0') scan = after;
      else if (node + 1 < nodes.length) {
        node++;
        scan = '0';
      } else scan = undefined;
    }
  }

  private pageKey(token: string): string {
    return `${this.prefix}page:{${token}}`;
  }

  /** Keeps a batch's rest for the next page; its token (a digest of the rest: the same rest, the same cursor). */
  private async keepPageRest(ids: readonly string[]): Promise<string> {
    const rest = JSON.stringify(ids);
    const token = createHash('sha256').update(rest).digest('hex').slice(0, 32);
    await this.run(() => this.redis.set(this.pageKey(token), rest, 'PX', PAGE_REST_MS));
    return token;
  }

  /**
   * A batch's rest kept by the last page (read, not taken: the same page asked again answers the same); BadCursor once
   * it expired.
   */
  private async pageRest(token: string): Promise<string[]> {
    const kept = await this.run(() => this.redis.get(this.pageKey(token)));
    if (kept === null) throw new BadCursor('the cursor expired: start the listing again', true);
    let ids: unknown;
    try {
      ids = JSON.parse(kept);
    } catch {
      ids = undefined;
    }
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
      throw new BadCursor('not a cursor of this store');
    return ids as string[];
  }

  /** Where SCAN runs: the one server, or each master of a Cluster in a stable order. */
  private nodes(): Client[] {
    const r = this.redis as Client;
    if (!('nodes' in r) || typeof r.nodes !== 'function') return [r];
    return [...(r as Cluster).nodes('master')].sort((a, b) => addr(a).localeCompare(addr(b)));
  }
}

const addr = (r: Redis) => `${r.options.host ?? ''}:${r.options.port ?? ''}`;
const ms = (t: number) => Math.max(1, Math.round(t));

/** A MULTI's answer: its first failed command's error is thrown (exec resolves even then). */
function failed(r: [Error | null, unknown][] | null): void {
  if (r === null) throw new Error('the transaction was aborted');
  for (const [err] of r) if (err) throw err;
}
