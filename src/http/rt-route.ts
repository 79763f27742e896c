/**
 * The real-time route, POST /rt and POST /rt/:flow: parse the body (losslessly), hand the
 * request to the call step, map its answer's kind to an HTTP status, send. Credentials are
 * checked before the body is read (onRequest), so an unauthenticated request costs nothing
 * and never reaches the call state; then the body must be JSON. A span per request when an
 * OpenTelemetry SDK records (src/http/tracing.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AnswerKind, StepAnswer } from '../engine/answer.js';
import type { CallHandler } from '../engine/call.js';
import { isPromise } from '../engine/maybe.js';
import { parseRtRequest } from '../protocol/request.js';
import { sendError } from './envelope.js';
import { requireJsonBody } from './guards.js';
import type { RtSpan, RtTracing } from './tracing.js';

/** The HTTP status of each kind of answer the call step gives (src/engine/answer.ts). */
export const ANSWER_STATUS: Record<AnswerKind, number> = {
  answered: 200,
  not_found: 404,
  stale: 409,
  unavailable: 503,
  failed: 500,
};

export interface RtRouteDeps {
  handler: CallHandler;
  tracing: RtTracing;
  /** Deepest nesting of a request body. */
  bodyDepth: number;
  /** The Basic auth check of /rt, when credentials are set. */
  auth?: onRequestHookHandler;
  notAllowed(allow: string, what: string): (req: FastifyRequest, reply: FastifyReply) => unknown;
}

type RtFastifyRequest = FastifyRequest<{ Params: { flow?: string }; Body: unknown }>;

export function registerRt(app: FastifyInstance, d: RtRouteDeps): void {
  /** Sends the handler's answer. */
  const send = (reply: FastifyReply, answer: StepAnswer, span: RtSpan | undefined): FastifyReply => {
    if (answer.kind !== 'answered') return sendError(reply, ANSWER_STATUS[answer.kind], answer.code, answer.message);
    if (span && answer.late) span.late = true;
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  };
  /**
   * Parses, steps and answers. An answer the handler gives at once (src/engine/maybe.ts) is sent in this call and
   * nothing is returned (Fastify's way for a handler that sent its reply); else the promise of the sent reply.
   */
  const step = (req: RtFastifyRequest, reply: FastifyReply, span: RtSpan | undefined): Promise<FastifyReply> | void => {
    const body = typeof req.body === 'string' ? req.body : '';
    const parsed = parseRtRequest(body, { maxDepth: d.bodyDepth });
    if (!parsed.ok) {
      sendError(reply, 400, parsed.code, parsed.message);
      return;
    }
    if (span) d.tracing.note(span, parsed.request.callid, parsed.request.command_id);
    const answer = d.handler.handle(parsed.request, req.params.flow, req.log, span?.traceId);
    if (isPromise(answer)) return answer.then((a) => send(reply, a, span));
    send(reply, answer, span);
  };
  const rt = (req: RtFastifyRequest, reply: FastifyReply) => {
    const span = d.tracing.start(req);
    if (!span) return step(req, reply, undefined);
    return traced(req, reply, span);
  };
  const traced = async (req: RtFastifyRequest, reply: FastifyReply, span: RtSpan) => {
    let failed = false;
    try {
      return await d.tracing.within(span, () => step(req, reply, span));
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      d.tracing.end(span, failed ? 500 : reply.statusCode);
    }
  };
  const onRequest = [...(d.auth ? [d.auth] : []), requireJsonBody];
  const OTHER = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT'] as const;
  for (const url of ['/rt', '/rt/:flow']) {
    app.route({ method: 'POST', url, handler: rt, onRequest });
    app.route({ method: [...OTHER], url, handler: d.notAllowed('POST', 'the real-time endpoint only takes POST') });
  }
}
