/**
 * OpenTelemetry spans of the real-time route, through @opentelemetry/api only: a no-op
 * until the application registers an SDK (docs/operations.md). Each POST /rt request is a
 * span `callscript.rt` (kind SERVER, its parent taken from a `traceparent` header if one is
 * sent), started in the route handler and ended once the reply is handed to Fastify.
 *
 * What the step did reaches the span through the step observer (src/engine/observe.ts):
 * the route handler notes its span under the request's callid and command_id while the
 * step runs, and the event, told before the handler resumes, finds it there; nothing is
 * kept after the reply. When no SDK records, nothing is noted and the observer returns at
 * once. A step that missed the deadline tells its event after its span has ended (the
 * fallback was the reply): the span says `callscript.deadline_fallback`, without the step's
 * attributes.
 */
import { isFailure } from '../engine/report.js';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { StepEvent, StepObserver } from '../engine/observe.js';

/** The span of one /rt request being handled. */
export interface RtSpan {
  readonly span: Span;
  readonly ctx: Context;
  /** Its trace id (given to CallHandler.handle, kept in the call history). */
  readonly traceId: string;
  /** Where it is noted while its step runs (callid and command_id). */
  key?: string;
  /** Its step's event came. */
  told?: boolean;
  /** The reply was a deadline fallback. */
  late?: boolean;
}

const NO_FIELDS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * For a pino `mixin`: the trace and span ids of the span active where a line is logged,
 * when one records; else nothing (a look-up in the no-op context when no SDK is set).
 */
export function traceLogFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return NO_FIELDS;
  const c = span.spanContext();
  return { trace_id: c.traceId, span_id: c.spanId };
}

/**
 * pino options that put `trace_id` and `span_id` on the lines logged within a recording
 * span: `pino({ ...traceLogOptions })`, or Fastify's `logger: { level, ...traceLogOptions }`.
 * A line logged with no span costs a look-up and nothing is copied.
 */
export const traceLogOptions = {
  mixin: traceLogFields,
  mixinMergeStrategy: (mergeObject: object, mixinObject: object): object =>
    mixinObject === NO_FIELDS ? mergeObject : Object.assign(mixinObject, mergeObject),
};

export class RtTracing implements StepObserver {
  private readonly tracer: Tracer;
  /** The spans of the steps running, by callid and command_id (a retry of a request in progress shares its key). */
  private readonly open = new Map<string, RtSpan[]>();

  constructor() {
    // a tracer of the global provider: it delegates to the SDK registered, even after this
    this.tracer = trace.getTracer('callscript');
  }

  /** The span of a request to /rt; undefined when no SDK records it (the request then goes on untraced). */
  start(req: { headers: IncomingHttpHeaders; routeOptions: { url?: string } }): RtSpan | undefined {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = this.tracer.startSpan('callscript.rt', { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) return undefined;
    span.setAttribute('http.request.method', 'POST');
    span.setAttribute('http.route', req.routeOptions.url ?? '');
    return { span, ctx: trace.setSpan(parent, span), traceId: span.spanContext().traceId };
  }

  /** Runs `fn` with the span active (log lines written meanwhile carry its ids). */
  within<T>(s: RtSpan, fn: () => T): T {
    return context.with(s.ctx, fn);
  }

  /** The request is parsed: its callid on the span, and the span noted for its step's event. */
  note(s: RtSpan, callid: string, commandId: number): void {
    s.span.setAttribute('callscript.callid', callid);
    s.key = `${callid}\u0000${commandId}`;
    const list = this.open.get(s.key);
    if (list) list.push(s);
    else this.open.set(s.key, [s]);
  }

  step(e: StepEvent): void {
    if (this.open.size === 0 || e.late) return;
    const s = this.open.get(`${e.callid}\u0000${e.request.commandId}`)?.find((x) => !x.told);
    if (!s) return;
    s.told = true;
    const span = s.span;
    if (e.flow !== undefined) span.setAttribute('callscript.flow', e.flow);
    if (e.version !== undefined) span.setAttribute('callscript.version', e.version);
    if (e.step !== undefined) span.setAttribute('callscript.step', e.step);
    span.setAttribute('callscript.result', e.request.result);
    span.setAttribute('callscript.outcome', e.outcome);
    if (isFailure(e.answer) && e.code !== undefined) span.setAttribute('error.type', e.code);
  }

  /** The reply is sent: the span ends (status ERROR on a 5xx) and is forgotten. */
  end(s: RtSpan, status: number): void {
    if (s.key !== undefined) {
      const list = this.open.get(s.key);
      const rest = list?.filter((x) => x !== s) ?? [];
      if (rest.length > 0) this.open.set(s.key, rest);
      else this.open.delete(s.key);
    }
    s.span.setAttribute('http.response.status_code', status);
    if (s.late) s.span.setAttribute('callscript.deadline_fallback', true);
    if (status >= 500) s.span.setStatus({ code: SpanStatusCode.ERROR });
    s.span.end();
  }
}
