/**
 * An SDK registered through another copy of @opentelemetry/api than callscript's (an older
 * minor version: npm installed two copies) leaves callscript's spans no-ops; the plugin says
 * so at start (TRACING_API_MISMATCH) instead of tracing nothing in silence.
 */
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, expect, it } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { apiVersion, tracingMismatch } from '../../src/http/tracing-check.js';

const KEY = Symbol.for('opentelemetry.js.api.1');
const FLOWS = new URL('../fixtures/tracing-flows', import.meta.url).pathname;
const g = globalThis as unknown as Record<symbol, unknown>;

afterEach(() => {
  trace.disable();
  delete g[KEY];
});

it("finds none with no SDK, and none with an SDK registered through callscript's own API", async () => {
  expect(tracingMismatch()).toBeUndefined();
  const provider = new TracerProvider();
  trace.setGlobalTracerProvider(provider);
  expect(tracingMismatch()).toBeUndefined();
  await provider.shutdown();
});

it("finds a tracer provider registered by an API copy of another version, which callscript's does not use", () => {
  // what @opentelemetry/api 1.9.0 leaves when an SDK depending on it starts first
  g[KEY] = Object.defineProperty({ trace: { getTracer: () => ({}) } }, 'version', { value: '1.9.0', enumerable: true });
  expect(trace.getTracerProvider()).not.toBe((g[KEY] as { trace: unknown }).trace);
  expect(tracingMismatch()).toEqual({ registered: '1.9.0', ours: apiVersion() });
  expect(apiVersion()).toMatch(/^1\.\d+\.\d+$/);
});

it('the server warns at start, naming both versions', async () => {
  g[KEY] = Object.defineProperty({ trace: { getTracer: () => ({}) } }, 'version', { value: '1.9.0', enumerable: true });
  let out = '';
  const logStream = new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) });
  const app = await buildServer({ flowsDir: FLOWS, logLevel: 'warn', logStream, watch: false });
  await app.close();
  const line = out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.code === 'TRACING_API_MISMATCH');
  expect(line).toMatchObject({ level: 40, registered: '1.9.0', ours: apiVersion() });
  expect(line!.msg).toBe(
    `an OpenTelemetry SDK is registered through @opentelemetry/api 1.9.0, which callscript's ` +
      `@opentelemetry/api ${apiVersion()} does not use: no spans are recorded. Install SDK packages that ` +
      `depend on @opentelemetry/api ${apiVersion()} (npm ls @opentelemetry/api shows the copies; ` +
      `docs/operations.md, Traces)`,
  );
});
