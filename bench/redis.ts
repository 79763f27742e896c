/**
 * The Redis side of `npm run bench`: whether Redis answers, the redis-server process's CPU
 * time (INFO cpu: all its clients, ours and anyone else's), and the bench's keys removed
 * at the end.
 */
import { Redis } from 'ioredis';
import { dropPrefix } from '../test/helpers/redis.js';

export class BenchRedis {
  private constructor(
    readonly url: string,
    readonly prefix: string,
    private readonly client: Redis,
  ) {}

  /** Connected, or why Redis cannot be used (then nothing is left open). */
  static async open(url: string, prefix: string): Promise<BenchRedis | string> {
    const client = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return new BenchRedis(url, prefix, client);
    } catch (err) {
      client.disconnect();
      return `Redis does not answer at ${url} (${err instanceof Error ? err.message : String(err)})`;
    }
  }

  /** redis-server's CPU time so far (user + system), µs. */
  async cpu(): Promise<number> {
    const info = await this.client.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
    return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
  }

  /** Removes every key of the bench; resolves with how many there were. */
  async close(): Promise<number> {
    this.client.disconnect();
    return dropPrefix(this.prefix, this.url);
  }
}
