/**
 * The call history in Redis (see HistoryStore in ./types.ts), beside the calls of RedisStore:
 *
 * - a live call's path: a list `<prefix>path:{<callid>}` (the call's hash tag: the same
 *   Redis Cluster slot as its state) and a hash `<prefix>pathinfo:{<callid>}` of its bytes (`b`, UTF-8 bytes of
 *   its entries) and of the entries dropped from its start (`d`), appended, trimmed to its last entries within
 *   its bytes, counted in (countPaths) and given their expiry by one script;
 * - a finished call's record: a string `<prefix>done:{<callid>}` with its own expiry;
 * - their order: a sorted set `<prefix>history:{index}` of callids scored by a counter
 *   `<prefix>history:{index}:seq`, their rows in a hash `<prefix>history:{index}:rows` and their bytes (record and
 *   row) in a hash `<prefix>history:{index}:bytes`, whose field `*` is the sum (one slot: one Lua script adds and
 *   trims atomically, and answers the callids trimmed, whose records are then deleted). Records that expired are
 *   taken out of the index when a listing meets them.
 *
 * Live calls are listed with SCAN over the call keys (every master of a Cluster, in turn),
 * reading each key's value; the callids of a batch that did not fit in a page are kept for
 * the next page as a string `<prefix>page:{<token>}` (see listLive).
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BadCursor, type FinishedExtra, type PathAppend, type PathCount, type StoredPath } from './types.js';

/**
 * Adds a finished call to the index: KEYS index, seq, rows, bytes; ARGV callid, keep, ttl, row ('' for none), the
 * record's bytes, the bytes all may hold (-1: no limit). Trims the oldest (the newest is kept) and answers their
 * callids.
 */
const HISTORY_ADD = `
local id = ARGV[1]
local old = redis.call('HGET', KEYS[4], id)
if old then redis.call('HINCRBY', KEYS[4], '*', -tonumber(old)) end
local size = tonumber(ARGV[5]) + #ARGV[4]
redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[2]), id)
if ARGV[4] == '' then redis.call('HDEL', KEYS[3], id) else redis.call('HSET', KEYS[3], id, ARGV[4]) end
redis.call('HSET', KEYS[4], id, size)
local total = redis.call('HINCRBY', KEYS[4], '*', size)
-- the index lives as long as its longest-lived record
for i = 1, 4 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
local keep = tonumber(ARGV[2])
local budget = tonumber(ARGV[6])
local n = redis.call('ZCARD', KEYS[1])
local gone = {}
while n > 1 and (n > keep or (budget >= 0 and total > budget)) do
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  redis.call('ZREM', KEYS[1], first)
  redis.call('HDEL', KEYS[3], first)
  total = redis.call('HINCRBY', KEYS[4], '*', -tonumber(redis.call('HGET', KEYS[4], first) or '0'))
  redis.call('HDEL', KEYS[4], first)
  n = n - 1
  gone[#gone + 1] = first
end
return gone`;

/** Takes finished calls whose records expired out of the index: KEYS index, rows, bytes; ARGV their callids. */
const HISTORY_FORGET = `
for _, id in ipairs(ARGV) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HINCRBY', KEYS[3], '*', -tonumber(redis.call('HGET', KEYS[3], id) or '0'))
    redis.call('HDEL', KEYS[3], id)
  end
end
return 1`;

/**
 * Drops a path's oldest entries (KEYS[1]; its info KEYS[2]) while more than \`max\` or over \`budget\` bytes (-1: no
 * limit), the newest kept; counts them.
 */
const TRIM = `
local function trim(n, bytes, max, budget)
  local drop, freed = 0, 0
  while n - drop > 1 and (n - drop > max or (budget >= 0 and bytes - freed > budget)) do
    freed = freed + #redis.call('LPOP', KEYS[1])
    drop = drop + 1
  end
  if drop > 0 then
    redis.call('HINCRBY', KEYS[2], 'b', -freed)
    redis.call('HINCRBY', KEYS[2], 'd', drop)
  end
end
`;

/** Appends to a path (KEYS path, info; ARGV entry, max entries, ttl, max bytes or -1), trims it, sets its expiry. */
const PATH_APPEND = `${TRIM}
local n = redis.call('RPUSH', KEYS[1], ARGV[1])
local bytes = redis.call('HINCRBY', KEYS[2], 'b', #ARGV[1])
trim(n, bytes, tonumber(ARGV[2]), tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

/**
 * Counts requests in a path's last entry (KEYS path, info; ARGV replays, refused, max bytes or -1): the entry's last
 * members \`,"replays":<n>,"refused":<n>}\` (countedEntry in ./types.ts, the same rule), its bytes counted, the path
 * trimmed to its bytes. A path that does not exist is not made.
 */
const PATH_COUNT = `${TRIM}
local last = redis.call('LINDEX', KEYS[1], -1)
if not last or string.sub(last, 1, 1) ~= '{' or string.sub(last, -1) ~= '}' then return 0 end
local rp, rf = tonumber(ARGV[1]), tonumber(ARGV[2])
local tail = string.sub(last, -64)
local s, _, a, b = string.find(tail, ',"replays":(%d+),"refused":(%d+)}$')
local counted
if s then
  counted = string.sub(last, 1, #last - #tail + s - 1) .. ',"replays":' .. string.format('%d', tonumber(a) + rp) ..
    ',"refused":' .. string.format('%d', tonumber(b) + rf) .. '}'
else
  local head = string.sub(last, 1, -2)
  local sep = ','
  if head == '{' then sep = '' end
  counted = head .. sep .. '"replays":' .. string.format('%d', rp) .. ',"refused":' .. string.format('%d', rf) .. '}'
end
redis.call('LSET', KEYS[1], -1, counted)
local bytes = redis.call('HINCRBY', KEYS[2], 'b', #counted - #last)
trim(redis.call('LLEN', KEYS[1]), bytes, math.huge, tonumber(ARGV[3]))
return 1`;

type Client = Redis | Cluster;
type Scripted = Client & {
  csHistoryAdd(
    index: string,
    seq: string,
    rows: string,
    bytes: string,
    callid: string,
    keep: number,
    ttl: number,
    row: string,
    recordBytes: number,
    maxBytes: number,
  ): Promise<string[]>;
  csHistoryForget(index: string, rows: string, bytes: string, ...callids: string[]): Promise<number>;
  csPathAppend(key: string, info: string, entry: string, max: number, ttl: number, maxBytes: number): Promise<number>;
  csPathCount(key: string, info: string, replays: number, refused: number, maxBytes: number): Promise<number>;
};

/** A pipeline with the path scripts. */
type PathPipeline = {
  csPathAppend(key: string, info: string, entry: string, max: number, ttl: number, maxBytes: number): void;
  csPathCount(key: string, info: string, replays: number, refused: number, maxBytes: number): void;
  exec(): Promise<[Error | null, unknown][] | null>;
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
    redis.defineCommand('csHistoryAdd', { numberOfKeys: 4, lua: HISTORY_ADD });
    redis.defineCommand('csHistoryForget', { numberOfKeys: 3, lua: HISTORY_FORGET });
    redis.defineCommand('csPathAppend', { numberOfKeys: 2, lua: PATH_APPEND });
    redis.defineCommand('csPathCount', { numberOfKeys: 2, lua: PATH_COUNT });
    this.redis = redis as Scripted;
    this.cluster = (redis as { isCluster?: boolean }).isCluster === true;
  }

  pathKey(callid: string): string {
    return `${this.prefix}path:{${callid}}`;
  }

  pathInfoKey(callid: string): string {
    return `${this.prefix}pathinfo:{${callid}}`;
  }

  doneKey(callid: string): string {
    return `${this.prefix}done:{${callid}}`;
  }

  private get indexKey(): string {
    return `${this.prefix}history:{index}`;
  }

  /**
   * Appends entries to their calls' paths: one script call per entry (RPUSH, trim, PEXPIRE), all in one pipeline (one
   * round trip; a Cluster routes each to its node instead).
   */
  async appendPaths(
    entries: readonly PathAppend[],
    maxEntries: number,
    ttlMs: number,
    maxBytes?: number,
  ): Promise<void> {
    const max = Math.max(1, Math.floor(maxEntries));
    const ttl = ms(ttlMs);
    const budget = bytesLimit(maxBytes);
    await this.paths(entries, (r, e) =>
      r.csPathAppend(this.pathKey(e.callid), this.pathInfoKey(e.callid), e.entry, max, ttl, budget),
    );
  }

  async countPaths(counts: readonly PathCount[], maxBytes?: number): Promise<void> {
    const budget = bytesLimit(maxBytes);
    await this.paths(counts, (r, c) =>
      r.csPathCount(this.pathKey(c.callid), this.pathInfoKey(c.callid), c.replays, c.refused, budget),
    );
  }

  /** One path script per item, in one pipeline (a Cluster sends each to its node instead). */
  private async paths<T>(items: readonly T[], call: (r: PathPipeline | Scripted, item: T) => unknown): Promise<void> {
    if (items.length === 0) return;
    if (this.cluster) {
      await this.run(() => Promise.all(items.map((x) => call(this.redis, x))));
      return;
    }
    const p = this.redis.pipeline() as unknown as PathPipeline;
    for (const x of items) call(p, x);
    await this.run(() => p.exec().then(failed));
  }

  async readPath(callid: string): Promise<string[]> {
    return this.run(() => this.redis.lrange(this.pathKey(callid), 0, -1));
  }

  /** The entries and the count of those dropped, in one MULTI (one slot: the call's hash tag). */
  async loadPath(callid: string): Promise<StoredPath> {
    const r = await this.run(() =>
      this.redis.multi().lrange(this.pathKey(callid), 0, -1).hget(this.pathInfoKey(callid), 'd').exec(),
    );
    failed(r);
    const entries = r![0]![1] as string[];
    return { entries, dropped: entries.length === 0 ? 0 : Number(r![1]![1] ?? 0) };
  }

  async dropPath(callid: string): Promise<void> {
    await this.run(() => this.redis.del(this.pathKey(callid), this.pathInfoKey(callid)));
  }

  async addFinished(callid: string, record: string, keep: number, ttlMs: number, extra?: FinishedExtra): Promise<void> {
    await this.run(() => this.redis.set(this.doneKey(callid), record, 'PX', ms(ttlMs)));
    const old = await this.run(() =>
      this.redis.csHistoryAdd(
        this.indexKey,
        `${this.indexKey}:seq`,
        `${this.indexKey}:rows`,
        `${this.indexKey}:bytes`,
        callid,
        Math.max(1, Math.floor(keep)),
        ms(ttlMs),
        extra?.row ?? '',
        Buffer.byteLength(record, 'utf8'),
        bytesLimit(extra?.maxBytes),
      ),
    );
    if (old.length > 0) await this.run(() => Promise.all(old.map((id) => this.redis.del(this.doneKey(id)))));
  }

  async listFinished(offset: number, limit: number): Promise<string[]> {
    return this.finishedPage(offset, limit, (ids) =>
      // one GET per record (they are in the slots of their callids: no MGET on a Cluster)
      Promise.all(ids.map((id) => this.redis.get(this.doneKey(id)))),
    );
  }

  /** The rows (one HMGET: the index's slot), of records that still exist; a record without a row whole. */
  async listFinishedRows(offset: number, limit: number): Promise<string[]> {
    return this.finishedPage(offset, limit, async (ids) => {
      const [rows, live] = await Promise.all([
        this.redis.hmget(`${this.indexKey}:rows`, ...ids),
        Promise.all(ids.map((id) => this.redis.exists(this.doneKey(id)))),
      ]);
      return Promise.all(ids.map((id, i) => (live[i] === 0 ? null : (rows[i] ?? this.redis.get(this.doneKey(id))))));
    });
  }

  /**
   * A page of the index, newest first, read by `read` (null: the record expired); the callids of expired records are
   * taken out of the index and the page read again.
   */
  private async finishedPage(
    offset: number,
    limit: number,
    read: (ids: string[]) => Promise<(string | null)[]>,
  ): Promise<string[]> {
    if (limit <= 0) return [];
    for (let round = 1; ; round++) {
      const ids = await this.run(() => this.redis.zrevrange(this.indexKey, offset, offset + limit - 1));
      if (ids.length === 0) return [];
      const values = await this.run(() => read(ids));
      const gone = ids.filter((_, i) => values[i] === null);
      const present = values.filter((r): r is string => r !== null);
      if (gone.length === 0 || round === LIST_ROUNDS) return present;
      await this.run(() =>
        this.redis.csHistoryForget(this.indexKey, `${this.indexKey}:rows`, `${this.indexKey}:bytes`, ...gone),
      );
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
/** A byte limit as the scripts take it: -1 for none. */
const bytesLimit = (b: number | undefined) =>
  b === undefined || !Number.isFinite(b) ? -1 : Math.max(0, Math.floor(b));

/** A MULTI's answer: its first failed command's error is thrown (exec resolves even then). */
function failed(r: [Error | null, unknown][] | null): void {
  if (r === null) throw new Error('the transaction was aborted');
  for (const [err] of r) if (err) throw err;
}
