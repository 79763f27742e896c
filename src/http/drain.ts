/**
 * Draining: when the server closes (SIGTERM, app.close()), the requests in progress finish
 * and nothing else holds the process.
 *
 * Node alone does not do the second half: once its server closes it stops enforcing
 * headersTimeout and requestTimeout (their checking timer is cleared) and closes only the
 * connections idle between two requests at that moment. A connection that has sent
 * nothing, or part of its headers, stayed until the socket timeout (30 s), one trickling a
 * byte now and then for ever, and a keep-alive connection whose request finished during
 * the drain until its keep-alive timeout.
 *
 * So from the close on, every DRAIN_SWEEP_MS, a connection with no request in progress is
 * closed (its client sent no whole request: nothing of it was handled, it may send it to
 * another instance), and, once `requestTimeoutMs` has passed since the close, so is one
 * whose request has still not fully arrived (it would have timed out anyway: a request
 * must arrive within requestTimeoutMs of its start, which was before the close). A request
 * whose handler runs is left to answer (within the reply deadline).
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const DRAIN_SWEEP_MS = 100;

/**
 * `_httpMessage`: the response in progress on a connection, Node's own field (its closeIdleConnections reads it too).
 */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Tracks the server's connections; the function returned starts the drain (call it when the server closes). */
export function drainer(server: Server, requestTimeoutMs: number): () => void {
  const open = new Set<HttpSocket>();
  server.on('connection', (s: HttpSocket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return () => {
    if (!server.listening) return; // never listened (inject): no connection to drain
    const since = Date.now();
    const sweep = () => {
      const late = Date.now() - since >= requestTimeoutMs;
      for (const s of open) {
        const res = s._httpMessage;
        // an answer still being flushed (writableLength) is let out first
        if (res ? late && !res.req.complete : late || s.writableLength === 0) s.destroy();
      }
    };
    sweep();
    const timer = setInterval(sweep, DRAIN_SWEEP_MS).unref();
    server.once('close', () => clearInterval(timer));
  };
}
