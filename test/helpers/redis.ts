/**
 * Tests that need Redis read REDIS_URL (default redis://127.0.0.1:6379). When it does not
 * answer they are skipped with a visible message, except with CI=true, where they fail.
 * Each test uses a key prefix of its own, removed at the end.
 */
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why Redis tests cannot run, or undefined when Redis answers. Throws under CI=true. */
export async function redisMissing(): Promise<string | undefined> {
  const r = new Redis(REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return undefined;
  } catch (err) {
    const why =
      `Redis does not answer at ${REDIS_URL} (${err instanceof Error ? err.message : String(err)}): set ` +
      `REDIS_URL or start redis-server`;
    if (process.env.CI === 'true') {
      throw new Error(`${why}; CI=true, so the Redis tests fail instead of skipping`, { cause: err });
    }
    console.warn(`SKIPPED Redis tests: ${why}`);
    return why;
  } finally {
    r.disconnect();
  }
}

let n = 0;
/** A key prefix no other test (or run) uses. */
export function testPrefix(): string {
  return `cstest:${process.pid}:${Date.now().toString(36)}:${n++}:`;
}

/** Deletes every key under `prefix`; resolves with how many there were. */
export async function dropPrefix(prefix: string, url = REDIS_URL): Promise<number> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  r.on('error', () => {});
  try {
    let cursor = '0';
    let dropped = 0;
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) dropped += await r.del(...keys);
    } while (cursor !== '0');
    return dropped;
  } finally {
    r.disconnect();
  }
}
