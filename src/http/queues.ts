/**
 * The admin API's queues (docs/admin.md "Queues"): the lines and agents of the `queue` steps, read from the call
 * store (its `queues` capability, src/store/queues.ts: every instance sharing the store sees the same), and pausing
 * or resuming an agent in a queue. Registered by src/http/admin.ts inside the admin scope (its credentials and guards
 * apply). Every answer is bounded: a line and an agent list hold at most QUEUE_LIMITS.viewLimit entries; `waiting`
 * and `agentCounts` count them all. The time of each answer (`waitedMs`, the store's `now`) is the request's.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { checkE164 } from '../protocol/formats.js';
import { QUEUE_NAME_RE } from '../flow/check-queue.js';
import { QUEUE_LIMITS, type AgentView, type QueueLines, type QueueView } from '../store/queues.js';
import { capabilitiesOf, type CallStore } from '../store/types.js';
import { sendError as fail } from './envelope.js';

/** A caller of a line, as answered. */
export interface QueueCallerJson {
  /** 1-based place among the callers not ringing an agent (as the queue step tells the caller); null while ringing. */
  position: number | null;
  callid: string;
  /** Its arrival; its last poll (ISO 8601). */
  since: string | null;
  lastSeen: string | null;
  /** Milliseconds since its arrival, at the request's time. */
  waitedMs: number;
  /** The agent it is ringing, null when none. */
  ringing: string | null;
}

export interface QueueAgentJson {
  number: string;
  state: AgentView['state'];
  /** Paused in this queue: offered to none of its callers. */
  paused: boolean;
  /** Busy since (busy), free since (free; null when never rung); free again at (`until`, wrap_up). ISO 8601. */
  since: string | null;
  until: string | null;
  /** The caller it was claimed for and that caller's queue (busy), else null. */
  callid: string | null;
  queue: string | null;
}

/** The agents by what they can do now: paused ones counted as paused whatever their state, the others by state. */
export interface AgentCounts {
  free: number;
  busy: number;
  wrapUp: number;
  paused: number;
}

export interface QueueJson {
  name: string;
  /** The whole line's length (`line` lists at most `limit` of it). */
  waiting: number;
  /** Since the arrival of the line's oldest caller (ringing or not), 0 when nobody waits. */
  longestWaitMs: number;
  /** Counts kept by the store: served (done), hung up while waiting, timed out. */
  answered: number;
  abandoned: number;
  timedOut: number;
  /** The mean handling time of the last 20 served calls, null before the first. */
  handleMs: number | null;
  agentCounts: AgentCounts;
  line: QueueCallerJson[];
  agents: QueueAgentJson[];
}

export interface QueuesDeps {
  store: CallStore;
  /** The request's time (epoch ms); default Date.now. */
  now?: () => number;
}

/** Callers listed per queue when no `limit` is given: by GET /admin/queues, by GET /admin/queues/:name. */
export const LIST_LINE_LIMIT = 100;
export const ONE_LINE_LIMIT = QUEUE_LIMITS.viewLimit;

const iso = (ms: number | undefined): string | null =>
  typeof ms === 'number' && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
const since = (now: number, ms: number) => (Number.isFinite(ms) ? Math.max(0, now - ms) : 0);
const clip = (s: string) => (s.length > 64 ? `${s.slice(0, 64)}…` : s);

export function agentCounts(agents: readonly AgentView[]): AgentCounts {
  const n: AgentCounts = { free: 0, busy: 0, wrapUp: 0, paused: 0 };
  for (const a of agents) {
    if (a.paused) n.paused++;
    else if (a.state === 'busy') n.busy++;
    else if (a.state === 'wrap_up') n.wrapUp++;
    else n.free++;
  }
  return n;
}

/** A queue as the admin API answers it at `now`: its first `limit` callers and agents. */
export function queueJson(v: QueueView, now: number, limit: number = ONE_LINE_LIMIT): QueueJson {
  let place = 0;
  const line = v.line.slice(0, limit).map((e) => ({
    position: e.ringing === undefined ? ++place : null,
    callid: e.callid,
    since: iso(e.since),
    lastSeen: iso(e.seen),
    waitedMs: since(now, e.since),
    ringing: e.ringing ?? null,
  }));
  const agents = v.agents.slice(0, QUEUE_LIMITS.viewLimit).map((a) => ({
    number: a.number,
    state: a.state,
    paused: a.paused,
    since: iso(a.since),
    until: iso(a.until),
    callid: a.callid ?? null,
    queue: a.queue ?? null,
  }));
  return {
    name: v.name,
    waiting: Math.max(v.waiting, v.line.length),
    longestWaitMs: v.line.length > 0 ? since(now, v.line[0]!.since) : 0,
    answered: v.answered,
    abandoned: v.abandoned,
    timedOut: v.timedOut,
    handleMs: v.handleMs ?? null,
    agentCounts: agentCounts(v.agents),
    line,
    agents,
  };
}

/** The store's queues, or undefined when it has none. */
export function queuesOf(store: CallStore): QueueLines | undefined {
  const caps = capabilitiesOf(store);
  return caps.queues ? caps.queues() : undefined;
}

/** Why no queue can have this name, or undefined when one can. */
function badName(name: string): string | undefined {
  if (QUEUE_NAME_RE.test(name)) return undefined;
  const shown = clip(JSON.stringify(name).slice(1, -1));
  return `no queue can be named "${shown}": a queue name is 1 to 64 letters, digits, - and _`;
}

/** `limit` of the query string (once, 1..viewLimit), the default without one; a message when bad. */
function limitOf(q: Record<string, unknown>, byDefault: number): number | string {
  const l = q.limit;
  if (l === undefined) return byDefault;
  if (typeof l !== 'string' || !/^[0-9]{1,4}$/.test(l) || Number(l) < 1 || Number(l) > QUEUE_LIMITS.viewLimit)
    return `limit must be an integer from 1 to ${QUEUE_LIMITS.viewLimit} (given once): the callers listed per line`;
  return Number(l);
}

/** The body of POST /admin/queues/:name/agents, or why not. */
export function agentBody(b: Record<string, unknown>): { number: string; paused: boolean } | string {
  const extra = Object.keys(b).find((k) => k !== 'number' && k !== 'paused');
  if (extra !== undefined)
    return `unknown field "${clip(extra)}": the body is {"number": "+33…", "paused": true|false}`;
  if (typeof b.number !== 'string')
    return `number: the agent's number, E.164 (e.g. +33612345678), is required, got ${shown(b.number)}`;
  const why = checkE164(b.number);
  if (why) return `number "${clip(b.number)}" is not E.164: ${why}`;
  if (typeof b.paused !== 'boolean')
    return `paused: true (pause the agent in this queue) or false (resume it) is required, got ${shown(b.paused)}`;
  return { number: b.number, paused: b.paused };
}

function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return clip(JSON.stringify(v));
}

/** A store error as answered: 503 STORE_UNAVAILABLE; anything else is rethrown (a bug: 500). */
function storeFailure(reply: FastifyReply, err: unknown): FastifyReply {
  if ((err as { code?: unknown } | null)?.code === 'STORE_UNAVAILABLE')
    return fail(reply, 503, 'STORE_UNAVAILABLE', `the call store is unavailable (${(err as Error).message})`);
  throw err;
}

export function registerQueues(
  admin: FastifyInstance,
  d: QueuesDeps,
  body: (req: { body: unknown }) => Record<string, unknown> | string,
): void {
  const now = d.now ?? Date.now;
  const lines = queuesOf(d.store);
  const unsupported = (reply: FastifyReply) =>
    fail(
      reply,
      404,
      'QUEUES_UNSUPPORTED',
      'the call store has no queues (its capabilities declare no queues()): there is nothing to show or pause',
    );
  const unknown = (reply: FastifyReply, name: string) =>
    fail(reply, 404, 'UNKNOWN_QUEUE', `no queue named "${clip(name)}": no caller waits in it and no agent is known`);
  const one = async (q: QueueLines, at: number, name: string) => (await q.view(at, name)).find((v) => v.name === name);

  admin.get('/queues', async (req, reply) => {
    if (!lines) return unsupported(reply);
    const limit = limitOf(req.query as Record<string, unknown>, LIST_LINE_LIMIT);
    if (typeof limit === 'string') return fail(reply, 400, 'BAD_ADMIN_QUERY', limit);
    const at = now();
    try {
      const all = await lines.view(at);
      return { queues: all.slice(0, QUEUE_LIMITS.viewLimit).map((v) => queueJson(v, at, limit)) };
    } catch (err) {
      return storeFailure(reply, err);
    }
  });

  admin.get<{ Params: { name: string } }>('/queues/:name', async (req, reply) => {
    if (!lines) return unsupported(reply);
    const { name } = req.params;
    const bad = badName(name);
    if (bad) return fail(reply, 404, 'UNKNOWN_QUEUE', bad);
    const limit = limitOf(req.query as Record<string, unknown>, ONE_LINE_LIMIT);
    if (typeof limit === 'string') return fail(reply, 400, 'BAD_ADMIN_QUERY', limit);
    const at = now();
    try {
      const v = await one(lines, at, name);
      return v ? queueJson(v, at, limit) : unknown(reply, name);
    } catch (err) {
      return storeFailure(reply, err);
    }
  });

  // pauses or resumes an agent in a queue (one the store does not know yet too: an agent may be paused before its
  // first call); answers the queue as GET does
  admin.post<{ Params: { name: string } }>('/queues/:name/agents', async (req, reply) => {
    if (!lines) return unsupported(reply);
    const { name } = req.params;
    const bad = badName(name);
    if (bad) return fail(reply, 404, 'UNKNOWN_QUEUE', bad);
    const b = body(req);
    if (typeof b === 'string') return fail(reply, 400, 'BAD_ADMIN_BODY', b);
    const agent = agentBody(b);
    if (typeof agent === 'string') return fail(reply, 400, 'BAD_ADMIN_BODY', agent);
    const at = now();
    try {
      await lines.pause(name, agent.number, agent.paused, at);
      req.log.info(
        { code: 'QUEUE_AGENT_PAUSED', queue: name, number: agent.number, paused: agent.paused },
        `queue ${name}: agent ${agent.number} ${agent.paused ? 'paused' : 'resumed'} (set by the admin API)`,
      );
      const v = await one(lines, at, name);
      return queueJson(v ?? emptyQueue(name), at);
    } catch (err) {
      return storeFailure(reply, err);
    }
  });
}

/** A queue the store does not list (a store that keeps no pause of an unknown queue). */
function emptyQueue(name: string): QueueView {
  return { name, line: [], waiting: 0, agents: [], answered: 0, abandoned: 0, timedOut: 0 };
}
