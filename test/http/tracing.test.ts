/**
 * Spans of /rt requests (src/http/tracing.ts) captured with an SDK registered in this test
 * process (@opentelemetry/sdk-trace's InMemorySpanExporter, the async-hooks context
 * manager, the W3C propagator): one `callscript.rt` SERVER span per request with the step's
 * attributes (the result masked when sensitive), ERROR on a 5xx, a `traceparent` parent
 * honoured, the trace id given to the step's observers (and kept in the call history's
 * path); log lines within carry the ids.
 */
import { Writable } from 'node:stream';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer, type ServerOptions } from '../../src/http/server.js';
import { callscript } from '../../src/http/plugin.js';
import { traceLogOptions } from '../../src/http/tracing.js';
import type { StepEvent } from '../../src/engine/observe.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreUnavailable } from '../../src/store/types.js';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { hooked } from '../helpers/store.js';

const FLOWS = new URL('../fixtures/tracing-flows', import.meta.url).pathname;
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const manager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(manager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  exporter.reset();
});

async function server(opts: ServerOptions = {}) {
  const s = await createServer({ flowsDir: FLOWS, logLevel: false, ...opts });
  apps.push(s.app);
  return s;
}

const post = (app: FastifyInstance, url: string, over: Partial<RtFields> = {}, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: rtBody(over),
  });

const spans = () => exporter.getFinishedSpans();

describe('a span per /rt request', () => {
  it(
    'callscript.rt, SERVER, with the flow, version, step, ' + 'result, outcome, callid and status; one per request',
    async () => {
      const { app, registry } = await server();
      const v = registry.current('desk')!.version;
      await post(app, '/rt/desk', { callid: '11' });
      await post(app, '/rt/desk', { callid: '11', command: 'read', command_id: 1, command_result: '1' });
      await post(app, '/rt/desk', { callid: '11', command: 'read', command_id: 1, command_result: '1' });
      expect(spans()).toHaveLength(3);
      const [first, second, replay] = spans();
      expect(first!.name).toBe('callscript.rt');
      expect(first!.kind).toBe(SpanKind.SERVER);
      expect(first!.instrumentationScope.name).toBe('callscript');
      expect(first!.attributes).toEqual({
        'http.request.method': 'POST',
        'http.route': '/rt/:flow',
        'callscript.callid': '11',
        'callscript.flow': 'desk',
        'callscript.version': v,
        'callscript.step': 'menu',
        'callscript.result': '',
        'callscript.outcome': 'ok',
        'http.response.status_code': 200,
      });
      expect(first!.status).toEqual({ code: SpanStatusCode.UNSET });
      expect(second!.attributes).toMatchObject({
        'callscript.step': 'sales',
        'callscript.result': '1',
        'callscript.outcome': 'ok',
      });
      expect(replay!.attributes).toMatchObject({ 'callscript.outcome': 'replay', 'http.response.status_code': 200 });
      // each its own trace (no parent sent)
      expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(3);
      expect(spans().every((s) => s.parentSpanContext === undefined)).toBe(true);
    },
  );

  it("a client's result of 60 KB is cut to 256 bytes on the span (an exporter's queue holds no request)", async () => {
    const { app } = await server();
    await post(app, '/rt/desk', { callid: '14' });
    await post(app, '/rt/desk', { callid: '14', command: 'read', command_id: 0, command_result: 'R'.repeat(60_000) });
    expect(spans().map((s) => s.attributes['callscript.result'])).toEqual(['', `${'R'.repeat(240)}…(60000 bytes)`]);
  });

  it('the result of a sensitive input is masked', async () => {
    const { app } = await server();
    await post(app, '/rt/pin', { callid: '12' });
    await post(app, '/rt/pin', { callid: '12', command: 'read', command_id: 1, command_result: '4821' });
    const attrs = spans().map((s) => s.attributes['callscript.result']);
    expect(attrs).toEqual(['', '***']);
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain('4821');
  });

  it('no route: 404, no flow attributes; a bad body: 400, no callid; neither is an error', async () => {
    const { app } = await server();
    await post(app, '/rt/nope', { callid: '13' });
    await app.inject({
      method: 'POST',
      url: '/rt',
      headers: { 'content-type': 'application/json' },
      payload: '{"callid":',
    });
    const [none, bad] = spans();
    expect(none!.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/rt/:flow',
      'callscript.callid': '13',
      'callscript.result': '',
      'callscript.outcome': 'no_route',
      'http.response.status_code': 404,
    });
    expect(bad!.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/rt',
      'http.response.status_code': 400,
    });
    expect([none!.status.code, bad!.status.code]).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
  });

  it('a 5xx: status ERROR, error.type the code', async () => {
    const store = hooked(new MemoryStore(), {
      load: () => {
        throw new StoreUnavailable('Redis: connection refused');
      },
    });
    const { app } = await server({ store });
    expect((await post(app, '/rt/desk', { callid: '14' })).statusCode).toBe(503);
    const [s] = spans();
    expect(s!.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(s!.attributes).toMatchObject({
      'callscript.outcome': 'store_unavailable',
      'error.type': 'STORE_UNAVAILABLE',
      'http.response.status_code': 503,
    });
  });

  it('a traceparent header makes the span its child; a malformed one is ignored', async () => {
    const { app } = await server();
    const parent = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
    await post(app, '/rt/desk', { callid: '15' }, { traceparent: `00-${parent.traceId}-${parent.spanId}-01` });
    await post(app, '/rt/desk', { callid: '16' }, { traceparent: `00-${'z'.repeat(32)}-${'1'.repeat(16)}-01` });
    const [child, root] = spans();
    expect(child!.spanContext().traceId).toBe(parent.traceId);
    expect(child!.parentSpanContext?.spanId).toBe(parent.spanId);
    expect(root!.parentSpanContext).toBeUndefined();
    expect(root!.spanContext().traceId).not.toBe(parent.traceId);
  });

  it("the span's trace id reaches the step's observers (the call history keeps it)", async () => {
    const events: StepEvent[] = [];
    const { app } = await server({ observer: { step: (e) => events.push(e) } });
    await post(app, '/rt/desk', { callid: '17' });
    await post(app, '/rt/nope', { callid: '17' });
    expect(events.map((e) => e.traceId)).toEqual(spans().map((s) => s.spanContext().traceId));
    expect(events[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("the call history keeps each request's trace id in the call's path (GET /admin/calls/:callid)", async () => {
    const { app } = await server({ admin: { login: 'ops', password: 'pw' } });
    await post(app, '/rt/desk', { callid: '21' });
    await post(app, '/rt/desk', { callid: '21', command: 'read', command_id: 1, command_result: '1' });
    const auth = { authorization: 'Basic ' + Buffer.from('ops:pw').toString('base64') };
    const path = await vi.waitFor(async () => {
      const body = (await app.inject({ url: '/admin/calls/21', headers: auth })).json() as {
        path: { traceId?: string }[];
      };
      if (body.path.length < 2) throw new Error('path not written yet');
      return body.path;
    });
    expect(path.map((e) => e.traceId)).toEqual(spans().map((s) => s.spanContext().traceId));
  });

  it('a request retried while the first runs: two spans, each with its own outcome', async () => {
    let slow = 0;
    const store = hooked(new MemoryStore(), { load: () => new Promise((r) => setTimeout(r, slow)) });
    const { app } = await server({ store });
    await post(app, '/rt/desk', { callid: '18' });
    slow = 50;
    const again = { callid: '18', command: 'read', command_id: 1, command_result: '1' };
    await Promise.all([post(app, '/rt/desk', again), post(app, '/rt/desk', again)]);
    expect(
      spans()
        .slice(1)
        .map((s) => s.attributes['callscript.outcome']),
    ).toEqual(['ok', 'replay']);
  });

  it('a step past the deadline: the span of the fallback says so, without the step (it lands later)', async () => {
    let slow = 0;
    const store = hooked(new MemoryStore(), { load: () => new Promise((r) => setTimeout(r, slow)) });
    const { app } = await server({ store, deadlineMs: 100 });
    await post(app, '/rt/desk', { callid: '19' });
    slow = 400;
    expect(
      (await post(app, '/rt/desk', { callid: '19', command: 'read', command_id: 1, command_result: '1' })).json(),
    ).toMatchObject({ command: 'wait' });
    await new Promise((r) => setTimeout(r, 500));
    const late = spans()[1]!;
    expect(late.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/rt/:flow',
      'callscript.callid': '19',
      'callscript.deadline_fallback': true,
      'http.response.status_code': 200,
    });
  });
});

describe('log lines within a span carry its ids', () => {
  it(
    'trace_id and span_id on the lines logged while a ' + 'request is handled (traceLogOptions), none outside',
    async () => {
      const lines: Record<string, unknown>[] = [];
      const stream = new Writable({
        write(chunk, _enc, done) {
          for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
          done();
        },
      });
      const app = Fastify({
        loggerInstance: pino({ level: 'info', ...traceLogOptions }, stream) as unknown as FastifyBaseLogger,
      });
      apps.push(app);
      await app.register(callscript, { flowsDir: FLOWS });
      app.log.info('outside');
      await post(app, '/rt/desk', { callid: '20' });
      await post(app, '/rt/desk', { callid: '20', command: 'read', command_id: 1, call_status: 'HANGUP' });
      const ended = lines.find((l) => l.msg === 'call ended')!;
      const span = spans()[1]!;
      expect(ended).toMatchObject({
        callid: '20',
        trace_id: span.spanContext().traceId,
        span_id: span.spanContext().spanId,
      });
      expect(lines.find((l) => l.msg === 'outside')).not.toHaveProperty('trace_id');
    },
  );
});
