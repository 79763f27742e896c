/**
 * A QueueLines of the tests of the queues' admin routes, metrics and console view (test/http/*queues*.test.ts,
 * console-browser.test.ts): its views are set by the test, `pause` changes them as the contract says
 * (src/store/queues.ts), and every call is recorded with its `now`. A store around it declares the capability.
 */
import type { QueueLines, QueueView } from '../../src/store/queues.js';
import type { StoreCapabilities } from '../../src/store/types.js';
import { MemoryStore } from '../../src/store/memory.js';

export class FakeQueues implements QueueLines {
  readonly queues = new Map<string, QueueView>();
  /** The calls made: view and pause, with their arguments. */
  readonly calls: unknown[][] = [];
  /** Thrown (or waited on) by the next views. */
  fail: Error | undefined;
  hang: Promise<never> | undefined;

  constructor(views: readonly QueueView[] = []) {
    for (const v of views) this.queues.set(v.name, structuredClone(v));
  }

  async poll(): Promise<never> {
    throw new Error('the fake queues take no poll');
  }
  async leave(): Promise<void> {}
  async done(): Promise<void> {}

  async pause(queue: string, agent: string, paused: boolean, now: number): Promise<void> {
    this.calls.push(['pause', queue, agent, paused, now]);
    if (this.fail) throw this.fail;
    let q = this.queues.get(queue);
    if (!q)
      this.queues.set(
        queue,
        (q = { name: queue, line: [], waiting: 0, agents: [], answered: 0, abandoned: 0, timedOut: 0 }),
      );
    const a = q.agents.find((x) => x.number === agent);
    if (a) a.paused = paused;
    else q.agents.push({ number: agent, state: 'free', paused });
  }

  async view(now: number, name?: string): Promise<QueueView[]> {
    this.calls.push(name === undefined ? ['view', now] : ['view', now, name]);
    if (this.hang) return this.hang;
    if (this.fail) throw this.fail;
    const all = [...this.queues.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    return structuredClone(name === undefined ? all : all.filter((q) => q.name === name));
  }
}

/** A memory store whose capabilities give `queues` (or none: the queues unsupported). */
export class QueuesStore extends MemoryStore {
  override readonly capabilities: StoreCapabilities;
  constructor(readonly fake: FakeQueues | undefined) {
    super();
    const fq = fake;
    this.capabilities = fq ? { shared: false, queues: () => fq } : { shared: false };
  }
}

/** 2026-11-25T10:00:00.000Z: the tests' request time. */
export const T = Date.UTC(2026, 10, 25, 10, 0, 0);

/** Two queues: sales (two callers, one ringing; four agents, one of each state) and support (empty, one agent). */
export function sampleViews(): QueueView[] {
  return [
    {
      name: 'sales',
      line: [
        { callid: '4242', since: T - 83_000, seen: T - 1_000 },
        { callid: '4243', since: T - 40_000, seen: T - 2_000, ringing: '+33612345678' },
        { callid: '4244', since: T - 5_500, seen: T - 500 },
      ],
      waiting: 3,
      agents: [
        { number: '+33612345678', state: 'busy', callid: '4243', queue: 'sales', since: T - 10_000, paused: false },
        { number: '+33612345679', state: 'free', since: T - 600_000, paused: false },
        { number: '+33612345680', state: 'wrap_up', since: T - 30_000, until: T + 15_000, paused: false },
        { number: '+33612345681', state: 'free', paused: true },
      ],
      handleMs: 125_000,
      answered: 12,
      abandoned: 3,
      timedOut: 1,
    },
    {
      name: 'support',
      line: [],
      waiting: 0,
      agents: [{ number: '+442079460000', state: 'free', paused: false }],
      answered: 0,
      abandoned: 0,
      timedOut: 0,
    },
  ];
}
