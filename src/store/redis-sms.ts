/**
 * Delivery status of SMS and webhook event claims in Redis (see SmsStatusStore in
 * ./types.ts), beside the calls of RedisStore:
 *
 * - an SMS's record: a hash `<prefix>sms:{<hash>}`, field `s` who sent it, one field
 *   `r:<event id>` per report; a Lua script adds a report unless its event id is there or
 *   the record is full, and renews the expiry, atomically;
 * - a webhook event's claim: a string `<prefix>event:{<event id>}` set with NX and an expiry.
 */
import type { Cluster, Redis } from 'ioredis';

const REPORT = `
local field = 'r:' .. ARGV[1]
if redis.call('HEXISTS', KEYS[1], field) == 1 then return 0 end
local n = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], 's')
if n >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], field, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

type Client = Redis | Cluster;
type Scripted = Client & {
  csSmsReport(key: string, eventId: string, report: string, max: number, ttl: number): Promise<number>;
};

export class RedisSmsStatus {
  private readonly redis: Scripted;

  constructor(
    redis: Client,
    private readonly prefix: string,
    /** Runs a Redis operation within the store's command timeout, turning a failure into StoreUnavailable. */
    private readonly run: <T>(op: () => Promise<T>) => Promise<T>,
  ) {
    redis.defineCommand('csSmsReport', { numberOfKeys: 1, lua: REPORT });
    this.redis = redis as Scripted;
  }

  smsKey(hash: string): string {
    return `${this.prefix}sms:{${hash}}`;
  }

  eventKey(eventId: string): string {
    return `${this.prefix}event:{${eventId}}`;
  }

  async smsSent(hash: string, sent: string, ttlMs: number): Promise<void> {
    const key = this.smsKey(hash);
    await this.run(() => this.redis.multi().hset(key, 's', sent).pexpire(key, ms(ttlMs)).exec().then(failed));
  }

  async smsReport(hash: string, eventId: string, report: string, maxReports: number, ttlMs: number): Promise<boolean> {
    return (
      (await this.run(() =>
        this.redis.csSmsReport(this.smsKey(hash), eventId, report, Math.max(0, Math.floor(maxReports)), ms(ttlMs)),
      )) === 1
    );
  }

  async smsStatus(hash: string): Promise<{ sent?: string; reports: string[] } | undefined> {
    const all = await this.run(() => this.redis.hgetall(this.smsKey(hash)));
    const reports = Object.entries(all)
      .filter(([k]) => k.startsWith('r:'))
      .map(([, v]) => v);
    const sent = all.s;
    if (sent === undefined && reports.length === 0) return undefined;
    return { ...(sent !== undefined ? { sent } : {}), reports };
  }

  async claimEvent(eventId: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.redis.set(this.eventKey(eventId), '1', 'PX', ms(ttlMs), 'NX'))) === 'OK';
  }

  async releaseEvent(eventId: string): Promise<void> {
    await this.run(() => this.redis.del(this.eventKey(eventId)));
  }
}

const ms = (t: number) => Math.max(1, Math.round(t));

/** A MULTI's answer: its first failed command's error is thrown (exec resolves even then). */
function failed(r: [Error | null, unknown][] | null): void {
  if (r === null) throw new Error('the transaction was aborted');
  for (const [err] of r) if (err) throw err;
}
