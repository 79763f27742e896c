/**
 * The spans the server makes, kept in this process: an SDK registered for the file's tests (beforeAll) and taken off
 * after them (afterAll). Returns the exporter to read them from (and reset between tests).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll } from 'vitest';

export function recordSpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(manager.enable());
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  return exporter;
}
