/**
 * A first request whose request_hash is no id this server placed waits for the placements in
 * progress (the service may send a call's first request before calls.realtime's answer
 * comes back), but once in all: WAIT_FOR_PLACEMENT_MS (2 s), whether the placement is this
 * instance's or another's. It waited twice before (2 s for this instance's, then 2 s more
 * reading the store): 4 s of the service's 5 s reply limit.
 */
import { expect, it } from 'vitest';
import { OutboundCalls } from '../../src/http/outbound.js';
import type { ServiceClient } from '../../src/service/jsonrpc.js';
import { MemoryStore } from '../../src/store/memory.js';

it(
  "a call placed by another tool waits for this instance's placement in progress, then reads its record once " +
    'more, and no longer',
  async () => {
    const store = new MemoryStore();
    const reads: string[] = [];
    const counting = {
      putOutbound: (id: string, r: string, ttl: number) => store.putOutbound(id, r, ttl),
      getOutbound: (id: string) => (reads.push(id), store.getOutbound(id)),
      get: (id: string) => store.get(id),
      getFinished: (id: string) => store.getFinished(id),
    };
    const outbound = new OutboundCalls(counting, { history: true });
    // a placement that never gets calls.realtime's answer (the service is silent)
    const client = {
      timeoutMs: 10_000,
      calls: { realtime: () => new Promise<string>(() => undefined) },
    } as unknown as ServiceClient;
    void outbound.place(client, { app: 'A1B2C3D4', number: '+33612345678' });
    await new Promise((r) => setTimeout(r, 20)); // the placing marker is written
    reads.length = 0;
    const t0 = Date.now();
    expect(await outbound.start('FOREIGN1', '777', 'UP')).toBeUndefined();
    const waited = Date.now() - t0;
    // the record read at once, and once more after the 2 s wait; never the marker, no polling after it
    expect(reads).toEqual(['FOREIGN1', 'FOREIGN1']);
    expect(waited).toBeGreaterThanOrEqual(1990);
  },
);

it(
  'with the placement on another instance (only the marker ' + 'in the store), it polls the store for 2 s at most',
  async () => {
    const store = new MemoryStore();
    await store.putOutbound('-placing', String(Date.now()), 60_000);
    let reads = 0;
    const counting = {
      putOutbound: (id: string, r: string, ttl: number) => store.putOutbound(id, r, ttl),
      getOutbound: (id: string) => (id === 'FOREIGN2' && reads++, store.getOutbound(id)),
      get: (id: string) => store.get(id),
      getFinished: (id: string) => store.getFinished(id),
    };
    let now = 1_000_000;
    const outbound = new OutboundCalls(counting, { history: true, now: () => (now += 100) });
    expect(await outbound.start('FOREIGN2', '778', 'UP')).toBeUndefined();
    // each read advances the fake clock 100 ms: about 2 s of reads, then it gives up
    expect(reads).toBeGreaterThan(5);
    expect(reads).toBeLessThanOrEqual(21);
  },
);
