/**
 * A whole queue on a laptop: 20 callers and 3 agents, every call placed through the emulator (its agents answer after
 * 2 s and talk 20 s; --speed 50 makes a second 20 ms) against callscript serving test/fixtures/queue-calls/line.yaml.
 *
 * - memory store, one server: every caller is bridged, no agent is rung twice at once (the emulator's overlaps), each
 *   caller who had to wait was told its place, and the callers are served in their order of arrival: an oracle
 *   replays the store's own answers (joins, rings, frees, in the order the store gave them) and checks that no caller
 *   was rung while as many callers who arrived before it were still waiting as there were free agents;
 * - Redis, two servers on one prefix, each request of a call sent to either of them in turn: the same, the line
 *   shared (no caller rung while more callers than agents were ahead of it).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import type { CallStore } from '../../src/store/types.js';
import type { QueueLines, QueuePoll, QueueStatus } from '../../src/store/queues.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import type { AgentBehaviour } from '../../src/emulator/agents/behaviour.js';
import { startEmulator, type Running } from '../emulator/helpers.js';
import { dropPrefix, redisMissing, REDIS_URL, testPrefix } from '../helpers/redis.js';

const FLOWS = new URL('../fixtures/queue-calls', import.meta.url).pathname;
const AGENTS = ['+447700900101', '+447700900102', '+447700900103'];
const CALLERS = 20;
const agent = (b: Partial<AgentBehaviour>): AgentBehaviour => ({ answer: true, answerAfterS: 3, talkS: 60, ...b });

type Logged = { op: 'poll'; callid: string; st: QueueStatus } | { op: 'leave' | 'done'; callid: string };

/** The store's queue operations, logged in the order the store answered them. */
function logged(lines: QueueLines, log: Logged[]): QueueLines {
  return {
    poll: async (p: QueuePoll) => {
      const st = await lines.poll(p);
      log.push({ op: 'poll', callid: p.callid, st });
      return st;
    },
    leave: async (q, callid, now) => {
      await lines.leave(q, callid, now);
      log.push({ op: 'leave', callid });
    },
    done: async (q, callid, now, wrap) => {
      await lines.done(q, callid, now, wrap);
      log.push({ op: 'done', callid });
    },
    pause: (q, a, p, now) => lines.pause(q, a, p, now),
    view: (now, name) => lines.view(now, name),
  };
}

/** A store whose queues are logged. */
function withLog<S extends CallStore>(store: S, log: Logged[]): S {
  const caps = store.capabilities!;
  const lines = logged(caps.queues!(), log);
  Object.defineProperty(store, 'capabilities', { value: { ...caps, queues: () => lines } });
  return store;
}

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function server(store: CallStore): Promise<string> {
  const app: FastifyInstance = Fastify({ logger: false });
  await app.register(callscript, { flowsDir: FLOWS, store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  open.push(app);
  return url;
}

/** A front that sends each request to the servers in turn (a call's requests reach every instance). */
async function roundRobin(urls: string[]): Promise<string> {
  const app = Fastify({ logger: false });
  let n = 0;
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, body, done) => done(null, body));
  app.post('/rt/:flow', async (req, reply) => {
    const to = urls[n++ % urls.length]!;
    const res = await fetch(`${to}/rt/${(req.params as { flow: string }).flow}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: req.body as string,
    });
    reply.code(res.status).header('content-type', 'application/json');
    return res.text();
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  open.push(app);
  return url;
}

async function emulator(): Promise<Running> {
  const e = await startEmulator({
    agents: new Map(AGENTS.map((n) => [n, agent({ answerAfterS: 2, talkS: 20 })])),
    realtime: true,
    speed: 50,
  });
  open.push(e);
  return e;
}

/** Places the callers at once and waits for every call to end (bounded); their transcripts, in placing order. */
async function run(e: Running, url: string): Promise<Transcript[]> {
  // placed at once: a line forms whatever the machine's load (3 agents, 20 callers)
  const placed = await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      const r = await e.req('/emulator/calls', { body: { url: `${url}/rt/line`, wait: false } });
      expect(r.status, r.text).toBe(202);
      return r.json as { id: string };
    }),
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ts = await Promise.all(placed.map(async (p) => (await e.req(`/emulator/calls/${p.id}`)).json as Transcript));
    if (ts.every((t) => t.status === 'ended')) return ts;
    if (Date.now() > deadline)
      throw new Error(`calls still running after 60 s: ${ts.filter((t) => t.status !== 'ended').length}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What every run must show: all bridged by an agent, no overlap, announcements of the caller's place. */
async function checkCalls(e: Running, ts: Transcript[]): Promise<void> {
  expect(ts.map((t) => t.ended_by)).toEqual(Array(CALLERS).fill('bridge'));
  expect(ts.flatMap((t) => [...t.violations, ...t.warnings])).toEqual([]);
  const agents = (await e.req('/emulator/agents')).json as { overlaps: number; answered: number; state: string }[];
  expect(agents.map((a) => a.overlaps)).toEqual([0, 0, 0]);
  expect(agents.reduce((n, a) => n + a.answered, 0)).toBe(CALLERS);
  for (const t of ts) {
    const cmds = t.commands.map((c) => c.command);
    expect(cmds[0]).toBe('play'); // the greeting
    expect(cmds.at(-1)).toBe('dialout');
    const dial = t.commands.at(-1)!;
    expect(dial.params.targets).toEqual([{ number: expect.stringMatching(/^\+4477009001\d\d$/), timeout: 10 }]);
    // a caller who waited was told its place at once (the first announcement), and held in chunks of 5 s
    const said = t.commands.filter((c) => c.command === 'play').map((c) => String(c.params.media_id));
    const waited = cmds.includes('wait');
    if (waited) expect(said[1]).toMatch(/\|You are number \d+ in line\.$/);
    for (const c of t.commands.filter((x) => x.command === 'wait')) expect(c.params).toEqual({ wait: 5 });
  }
  // most callers waited (an agent serves a caller in 22 s: 20 callers take 7 rounds)
  expect(ts.filter((t) => t.commands.some((c) => c.command === 'wait')).length).toBeGreaterThanOrEqual(10);
}

/**
 * Replays the store's answers: a caller joins at its first poll; a `ring` claims its agent, which is free again at
 * the caller's next operation. At each ring, the callers who joined before it and wait (neither ringing nor gone)
 * must be fewer than the agents free just before: first come, first served. Returns the callers in ring order.
 */
function servedInOrder(log: Logged[]): string[] {
  const joined: string[] = [];
  const gone = new Set<string>();
  const claims = new Map<string, string>(); // callid -> agent
  const order: string[] = [];
  for (const x of log) {
    if (!joined.includes(x.callid)) joined.push(x.callid);
    const had = claims.get(x.callid);
    if (had !== undefined) claims.delete(x.callid); // its ring ended: the agent is free (no wrap-up here)
    if (x.op !== 'poll') {
      gone.add(x.callid);
      continue;
    }
    if (x.st.kind !== 'ring') continue;
    const before = joined.slice(0, joined.indexOf(x.callid));
    const waiting = before.filter((c) => !gone.has(c) && !claims.has(c)).length;
    const free = AGENTS.filter((a) => ![...claims.values()].includes(a)).length;
    expect(waiting, `${x.callid} rung with ${waiting} earlier callers waiting and ${free} agents free`).toBeLessThan(
      free,
    );
    expect([...claims.values()]).not.toContain(x.st.agent);
    claims.set(x.callid, x.st.agent!);
    if (!order.includes(x.callid)) order.push(x.callid);
  }
  return order;
}

describe('20 callers, 3 agents, through the emulator', () => {
  it('memory store: all bridged, no agent rung twice at once, places announced, first come first served', async () => {
    const log: Logged[] = [];
    const store = withLog(new MemoryStore(), log);
    const url = await server(store);
    const e = await emulator();
    const ts = await run(e, url);
    await checkCalls(e, ts);
    const order = servedInOrder(log);
    expect(order).toHaveLength(CALLERS);
    const view = await store.capabilities!.queues!().view(Date.now(), 'sales');
    expect(view[0]).toMatchObject({ waiting: 0, answered: CALLERS, abandoned: 0, timedOut: 0 });
  });

  it('Redis, two servers: one line, all bridged, nobody rung with more callers ahead than agents', async (t) => {
    const missing = await redisMissing();
    if (missing) return t.skip(missing);
    const prefix = testPrefix();
    open.push({ close: () => dropPrefix(prefix) });
    const log: Logged[] = [];
    const stores = [0, 1].map(() => withLog(new RedisStore(REDIS_URL, { prefix }), log));
    for (const s of stores) open.push({ close: () => s.close() });
    const urls = [await server(stores[0]!), await server(stores[1]!)];
    const e = await emulator();
    const ts = await run(e, await roundRobin(urls));
    await checkCalls(e, ts);
    const rings = log.filter((x): x is Extract<Logged, { op: 'poll' }> => x.op === 'poll' && x.st.kind === 'ring');
    expect(new Set(rings.map((r) => r.callid)).size).toBe(CALLERS);
    for (const r of rings) expect(r.st.position).toBeLessThanOrEqual(AGENTS.length);
    const view = await stores[0]!.capabilities!.queues!().view(Date.now(), 'sales');
    expect(view[0]).toMatchObject({ waiting: 0, answered: CALLERS, abandoned: 0, timedOut: 0 });
  });
});
