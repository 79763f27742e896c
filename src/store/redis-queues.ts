/**
 * The queues in Redis (the contract: ./queues.ts), shared by every instance on the store: each operation is one Lua
 * script (./redis-queues-lua.ts), atomic, so two instances polling at once never claim one agent twice.
 *
 * Keys, under the store's prefix and one Redis Cluster hash tag (`<prefix>q{queues}:`, one slot for all):
 * per queue `line:<q>` (sorted set: callid -> arrival), `stale:<q>` (callid -> when it goes stale; the callers not
 * ringing), `ringing:<q>` (callid -> arrival), `lease:<q>` (callid -> when its claim lapses), `caller:<q>` (hash:
 * callid -> last poll, staleMs, agent ringing, agents tried), `paused:<q>` (set), `handle:<q>` (list: the last 20
 * handling times), `known:<q>` (sorted set: agent -> when last listed), `meta:<q>` (hash: answered, abandoned,
 * timed_out, rr the round-robin cursor, list the last poll's list); for the store `agents` (hash: number -> when it
 * is free from), `claims` (hash: number -> its claim: when, callid, queue), `agents:at` (number -> last change) and
 * `names` (queue -> last operation).
 *
 * A position is ZRANK in the line less the ringing ahead (ZRANK in `ringing`): O(log n). The line's keys expire
 * 2 x staleMs + maxWaitMs + leaseMs after the last poll, the rest QUEUE_KEEP_MS after the last operation.
 */
import type { Cluster, Redis } from 'ioredis';
import {
  QUEUE_LIMITS,
  type AgentView,
  type QueueLines,
  type QueuePoll,
  type QueueStatus,
  type QueueView,
} from './queues.js';
import { QUEUE_KEEP_MS, cleanAgent, cleanMs, cleanNow, cleanPoll } from './queue-rules.js';
import { END, PAUSE, POLL, VIEW } from './redis-queues-lua.js';
import { KINDS } from './redis-queues-prelude.js';
import { queueView } from './queue-view.js';
import { cmpText } from './sorted-list.js';

type Arg = string | number;
type Scripted = (Redis | Cluster) & {
  csqPoll(...args: Arg[]): Promise<[QueueStatus['kind'], string, number, number, number, number, number]>;
  csqEnd(...args: Arg[]): Promise<number>;
  csqPause(...args: Arg[]): Promise<number>;
  csqView(...args: Arg[]): Promise<ViewRow[]>;
};

/** name, waiting, line (4 a caller), agents (7 an agent), handling times, answered, abandoned, timed out. */
type ViewRow = [string, number, string[], string[], string[], string, string, string];

const { maxLine, maxQueues, maxAgents, sweepPerOp, viewLimit } = QUEUE_LIMITS;

export class RedisQueues implements QueueLines {
  private readonly redis: Scripted;
  /** Every key's start: the prefix and the hash tag. */
  readonly base: string;

  constructor(
    redis: Redis | Cluster,
    prefix: string,
    /** Runs a Redis operation within the store's command timeout, a failure made StoreUnavailable. */
    private readonly run: <T>(op: () => Promise<T>) => Promise<T>,
  ) {
    this.base = `${prefix}q{queues}:`;
    const keys = KINDS.length + 4;
    redis.defineCommand('csqPoll', { numberOfKeys: keys, lua: POLL });
    redis.defineCommand('csqEnd', { numberOfKeys: keys, lua: END });
    redis.defineCommand('csqPause', { numberOfKeys: keys, lua: PAUSE });
    redis.defineCommand('csqView', { numberOfKeys: 4, lua: VIEW });
    this.redis = redis as Scripted;
  }

  /** A queue's keys (KINDS), then the store's: what poll, end and pause declare. */
  keys(queue: string): string[] {
    return [...KINDS.map((k) => `${this.base}${k}:${queue}`), ...this.storeKeys()];
  }

  async poll(raw: QueuePoll): Promise<QueueStatus> {
    const p = cleanPoll(raw);
    const args: Arg[] = [
      ...this.keys(p.queue),
      ...this.common(p.now),
      p.queue,
      p.callid,
      p.strategy,
      p.maxWaitMs,
      p.leaseMs,
      p.staleMs,
      p.handleMs,
      maxLine,
      maxQueues,
      maxAgents,
      ...p.agents,
    ];
    const [kind, agent, position, waitedMs, expectedWaitMs, agents, free] = await this.run(() =>
      this.redis.csqPoll(...args),
    );
    return { kind, ...(agent ? { agent } : {}), position, waitedMs, expectedWaitMs, agents, free };
  }

  async leave(queue: string, callid: string, now: number): Promise<void> {
    await this.run(() => this.redis.csqEnd(...this.keys(queue), ...this.common(cleanNow(now)), queue, callid, ''));
  }

  async done(queue: string, callid: string, now: number, wrapUpMs: number): Promise<void> {
    const args = [...this.keys(queue), ...this.common(cleanNow(now)), queue, callid, cleanMs(wrapUpMs)];
    await this.run(() => this.redis.csqEnd(...args));
  }

  async pause(queue: string, agent: string, paused: boolean, now: number): Promise<void> {
    const a = cleanAgent(agent);
    if (a === undefined) return;
    const args = [...this.keys(queue), ...this.common(cleanNow(now)), queue, a, paused ? '1' : '0'];
    await this.run(() => this.redis.csqPause(...args, maxQueues, maxAgents));
  }

  async view(now: number, name?: string): Promise<QueueView[]> {
    const t = cleanNow(now);
    const args = [...this.storeKeys(), ...this.common(t), viewLimit, name === undefined ? 'all' : 'one', name ?? ''];
    const rows = await this.run(() => this.redis.csqView(...args));
    return rows
      .sort((a, b) => cmpText(a[0], b[0]))
      .map(([queue, waiting, entries, agents, handle, answered, abandoned, timedOut]) =>
        queueView({
          name: queue,
          line: chunks(entries, 4).map(([callid = '', since, seen, ringing]) => ({
            callid,
            since: Number(since),
            seen: Number(seen),
            ...(ringing ? { ringing } : {}),
          })),
          waiting: Number(waiting),
          agents: chunks(agents, 7).map(([number = '', state, callid, q, since, until, paused]) => ({
            number,
            state: state as AgentView['state'],
            ...(state === 'busy' ? { callid, queue: q } : {}),
            ...(since ? { since: Number(since) } : {}),
            ...(until ? { until: Number(until) } : {}),
            paused: paused === '1',
          })),
          handle: handle.map(Number),
          answered: Number(answered),
          abandoned: Number(abandoned),
          timedOut: Number(timedOut),
        }),
      );
  }

  private storeKeys(): string[] {
    return [`${this.base}agents`, `${this.base}claims`, `${this.base}agents:at`, `${this.base}names`];
  }

  private common(now: number): Arg[] {
    return [now, sweepPerOp, QUEUE_KEEP_MS, this.base];
  }
}

function chunks(flat: string[], n: number): string[][] {
  const out: string[][] = [];
  for (let i = 0; i + n <= flat.length; i += n) out.push(flat.slice(i, i + n));
  return out;
}
