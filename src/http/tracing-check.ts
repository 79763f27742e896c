/**
 * An OpenTelemetry SDK that callscript's @opentelemetry/api cannot see. The API keeps what
 * an SDK registers (its tracer provider) in one global object, stamped with the version of
 * the API copy that made it; a copy of another minor version refuses to use it and stays a
 * no-op. That happens when the SDK installed beside callscript depends on an older API than
 * callscript's (npm then installs two copies): tracing is silently off. This finds it, so
 * the server can say so at start.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { trace } from '@opentelemetry/api';

/** Where @opentelemetry/api 1.x keeps its globals. */
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

export interface TracingMismatch {
  /** The API version the SDK registered through. */
  registered: string;
  /** callscript's copy of the API. */
  ours: string;
}

/** callscript's @opentelemetry/api version (its package.json, found from its entry point). */
export function apiVersion(): string {
  try {
    let dir = dirname(createRequire(import.meta.url).resolve('@opentelemetry/api'));
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      try {
        const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
        if (p.name === '@opentelemetry/api' && p.version) return p.version;
      } catch {
        // not here: one level up
      }
    }
  } catch {
    // not resolvable from here (bundled): unknown
  }
  return 'unknown';
}

/** A tracer provider registered that callscript's API does not use; undefined when none is, or when it is used. */
export function tracingMismatch(
  global: Record<symbol, unknown> = globalThis as unknown as Record<symbol, unknown>,
): TracingMismatch | undefined {
  const g = global[GLOBAL_KEY] as { version?: unknown; trace?: unknown } | undefined;
  if (!g || g.trace === undefined || trace.getTracerProvider() === g.trace) return undefined;
  return { registered: typeof g.version === 'string' ? g.version : 'unknown', ours: apiVersion() };
}
