/**
 * The HTTP server around the plugin: how long a client may take to send a request, how long
 * an idle connection is kept, how many connections are open at once, and the error envelope
 * for what Node and Fastify answer before any route runs. `createServer` uses both functions;
 * an app that registers the plugin in its own Fastify can too:
 *
 *   const app = Fastify({ logger: true, ...serverOptions() });
 *   guardServer(app);
 *   await app.register(callscript, { flowsDir: 'flows' });
 */
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import { clientErrorHandler, errorBody, frameworkErrors, sendError } from './envelope.js';
import { drainer } from './drain.js';
import { codeDefaults, codeNumberProblem } from '../config/code.js';

/**
 * The server's options of the config file's `server:` (in ms and connections); their defaults and bounds are in the
 * table of options (src/config/table-server.ts), and a value out of them throws.
 */
export interface TransportOptions {
  /**
   * The request line and headers must arrive within this many ms of the request's start (server.headers_timeout_ms).
   */
  headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this many ms (server.request_timeout_ms). */
  requestTimeoutMs: number;
  /**
   * An idle keep-alive connection is closed after this many ms, announced in `Keep-Alive: timeout=`
   * (server.keep_alive_timeout_ms).
   */
  keepAliveTimeoutMs: number;
  /**
   * A connection with a request in progress and no bytes moving either way is closed after this many ms
   * (server.socket_timeout_ms).
   */
  socketTimeoutMs: number;
  /** Connections open at once; more are closed as soon as they are accepted (server.max_connections). */
  maxConnections: number;
  /** Addresses (or CIDR ranges) of reverse proxies whose X-Forwarded-For is believed. Default none. */
  trustProxy?: string[];
}

/** The numbers of TransportOptions, each an option of the table. */
const NUMBERS = [
  'headersTimeoutMs',
  'requestTimeoutMs',
  'keepAliveTimeoutMs',
  'socketTimeoutMs',
  'maxConnections',
] as const;

/** The defaults, from the table of options. */
export const DEFAULT_TRANSPORT: TransportOptions = codeDefaults('', NUMBERS) as Record<
  (typeof NUMBERS)[number],
  number
>;

export function transportOptions(given: Partial<TransportOptions> = {}): TransportOptions {
  const t = { ...DEFAULT_TRANSPORT, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
  const bad = (what: string) => {
    throw new Error(`callscript server: ${what}`);
  };
  for (const name of NUMBERS) {
    const problem = codeNumberProblem(name, t[name]);
    if (problem !== undefined) bad(problem);
  }
  if (t.headersTimeoutMs > t.requestTimeoutMs)
    bad(`headersTimeoutMs (${t.headersTimeoutMs}) must not be longer than requestTimeoutMs (${t.requestTimeoutMs})`);
  return t;
}

/**
 * The Fastify constructor options: timeouts, no Node-written Host check, the envelope for client and routing errors.
 */
export function serverOptions(given: Partial<TransportOptions> = {}): FastifyHttpOptions<Server> {
  const t = transportOptions(given);
  return {
    http: {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      keepAliveTimeout: t.keepAliveTimeoutMs,
      // Node looks for timed-out requests on this period (default 30 s, which would let a
      // slow client hold its connection up to 30 s past the timeout).
      connectionsCheckingInterval: Math.min(
        1000,
        Math.max(25, Math.floor(Math.min(t.headersTimeoutMs, t.requestTimeoutMs) / 4)),
      ),
      // Node would answer a missing Host with an empty 400; guardServer answers it in the envelope.
      requireHostHeader: false,
    },
    requestTimeout: t.requestTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    connectionTimeout: t.socketTimeoutMs,
    // Fastify's own 503 while closing is not in the envelope: guardServer answers it.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(t),
    frameworkErrors,
    ...(t.trustProxy && t.trustProxy.length > 0 ? { trustProxy: t.trustProxy } : {}),
  };
}

/**
 * What cannot be given to the Fastify constructor: the connection cap (with a warning, at
 * most one per 10 s, while connections are refused), the envelope for an unknown `Expect`,
 * for a request without Host and for requests that arrive while the server closes; the
 * drain (src/http/drain.ts).
 */
export function guardServer(app: FastifyInstance, given: Partial<TransportOptions> = {}): void {
  const t = transportOptions(given);
  const server = app.server;
  server.maxConnections = t.maxConnections;
  const refused = { count: 0, timer: undefined as NodeJS.Timeout | undefined };
  server.on('drop', () => {
    refused.count++;
    if (refused.timer) return;
    app.log.warn(
      { code: 'CONNECTION_LIMIT', maxConnections: t.maxConnections },
      `a connection was refused: ${t.maxConnections} are open (server.max_connections)`,
    );
    refused.count = 0;
    refused.timer = setTimeout(() => {
      if (refused.count > 0)
        app.log.warn(
          { code: 'CONNECTION_LIMIT', maxConnections: t.maxConnections, refused: refused.count },
          `${refused.count} more connections refused in the last 10 s`,
        );
      refused.timer = undefined;
    }, 10_000).unref();
  });
  // CONNECT asks for a tunnel: Node hands it to a 'connect' listener, and without one closes
  // the socket unanswered. Answered in the envelope like any other refused method.
  server.on('connect', (_req, socket) => {
    const body = errorBody('METHOD_NOT_ALLOWED', 'CONNECT is not supported: this is an HTTP endpoint, not a proxy');
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json; ` +
        `charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.on('checkExpectation', (_req, res) => {
    const body = errorBody('EXPECTATION_FAILED', 'the only expectation supported is Expect: 100-continue');
    res
      .writeHead(417, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      })
      .end(body);
  });
  const state = { closing: false };
  // in-flight requests finish; idle, silent and trickling connections do not hold the close
  const drain = drainer(server, t.requestTimeoutMs);
  app.addHook('preClose', (done) => {
    state.closing = true;
    clearTimeout(refused.timer);
    drain();
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    if (state.closing) {
      sendError(
        reply.header('connection', 'close'),
        503,
        'SHUTTING_DOWN',
        'the server is shutting down: send the request to another instance',
      );
      return;
    }
    if (req.headers.host === undefined && req.raw.httpVersion === '1.1') {
      sendError(reply, 400, 'BAD_HTTP_REQUEST', 'an HTTP/1.1 request needs a Host header');
      return;
    }
    done();
  });
}
