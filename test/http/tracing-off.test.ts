/**
 * With no OpenTelemetry SDK registered (this file registers none): requests are served as
 * ever, no trace id reaches the step's observers, and log lines carry no trace ids.
 */
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { callscript } from '../../src/http/plugin.js';
import { RtTracing, traceLogFields, traceLogOptions } from '../../src/http/tracing.js';
import type { StepEvent } from '../../src/engine/observe.js';
import { rtBody } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/tracing-flows', import.meta.url).pathname;

it('no SDK: no span recorded, no trace id given to the step, no ids in the logs', async () => {
  expect(
    new RtTracing().start({
      headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` },
      routeOptions: { url: '/rt' },
    }),
  ).toBeUndefined();
  expect(trace.getActiveSpan()).toBeUndefined();
  expect(traceLogFields()).toEqual({});
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const events: StepEvent[] = [];
  const app = Fastify({
    loggerInstance: pino({ level: 'info', ...traceLogOptions }, stream) as unknown as FastifyBaseLogger,
  });
  await app.register(callscript, { flowsDir: FLOWS, observer: { step: (e) => events.push(e) } });
  const post = (over = {}) =>
    app.inject({
      method: 'POST',
      url: '/rt/desk',
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ callid: '1', ...over }),
    });
  expect((await post()).statusCode).toBe(200);
  expect((await post({ command: 'read', command_id: 1, call_status: 'HANGUP' })).statusCode).toBe(200);
  await app.close();
  expect(events).toHaveLength(2);
  expect(events.every((e) => !('traceId' in e))).toBe(true);
  const ended = lines.find((l) => l.msg === 'call ended')!;
  expect(ended).toMatchObject({ callid: '1', flow: 'desk' });
  expect(lines.some((l) => 'trace_id' in l || 'span_id' in l)).toBe(false);
});
