/**
 * Which call store a server uses: the memory store (one process, the default) or Redis
 * (shared by every instance), from a setting (`--store`, CALLSCRIPT_STORE, `store:` in
 * callscript.yaml).
 */
import { MemoryStore } from './memory.js';
import { RedisStore, type RedisTarget } from './redis.js';
import type { CallStore } from './types.js';

export type StoreSetting =
  | { kind: 'memory' }
  | {
      kind: 'redis';
      url: string;
      prefix: string;
      commandTimeoutMs: number;
      cluster?: string[];
      sentinels?: { host: string; port: number }[];
      name?: string;
    };

/** `memory`, or a redis:// / rediss:// URL; else why not. */
export function storeUrlProblem(url: string): string | undefined {
  if (url === 'memory' || /^rediss?:\/\/.+/.test(url)) return undefined;
  return `the store must be "memory" or a Redis URL (redis://host:6379/0, rediss:// for TLS), not "${url}"`;
}

/** A Redis URL with its password hidden, for logs and the banner. */
export function shownUrl(url: string): string {
  return url.replace(
    /^(rediss?:\/\/)([^@/]*)@/,
    (_m, scheme: string, auth: string) => `${scheme}${auth.includes(':') ? `${auth.split(':')[0]}:***` : '***'}@`,
  );
}

export function openStore(s: StoreSetting): CallStore {
  if (s.kind === 'memory') return new MemoryStore();
  const target: RedisTarget = s.cluster
    ? { cluster: s.cluster }
    : s.sentinels && s.name
      ? { sentinels: s.sentinels, name: s.name }
      : s.url;
  return new RedisStore(target, { prefix: s.prefix, commandTimeoutMs: s.commandTimeoutMs });
}
