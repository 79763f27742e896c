/**
 * Whether an HTTP request made with fetch (Node's built-in undici) may have reached the
 * server: a placement that failed without an answer was perhaps placed only if its request
 * was written to a connection. Node's fetch reports its requests on diagnostics channels
 * (undici's documented `undici:request:create` and `undici:client:sendHeaders`); the request
 * is tied to the work that made it through an AsyncLocalStorage, so concurrent placements are
 * told apart.
 *
 * `unsent` is true only when the request was seen created and never seen written: surely
 * not sent (a connection refused, or still connecting when it was aborted). A request not
 * seen at all (another fetch, channels renamed) counts as perhaps sent: the safe side, no
 * number called twice.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import dc from 'node:diagnostics_channel';

const CREATE = 'undici:request:create';
const SEND_HEADERS = 'undici:client:sendHeaders';

interface Seen {
  created: boolean;
  written: boolean;
}

export class Sending {
  private readonly als = new AsyncLocalStorage<Seen>();
  private readonly requests = new WeakMap<object, Seen>();

  /** Runs `work` (one fetch), and says whether its request surely never left. */
  async watch<T>(
    work: () => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false; error: unknown; unsent: boolean }> {
    const seen: Seen = { created: false, written: false };
    const onCreate = (m: unknown) => {
      if (this.als.getStore() !== seen) return;
      seen.created = true;
      const request = (m as { request?: object }).request;
      if (request) this.requests.set(request, seen);
    };
    const onSend = (m: unknown) => {
      const request = (m as { request?: object }).request;
      const s = request ? this.requests.get(request) : undefined;
      if (s) s.written = true;
    };
    dc.subscribe(CREATE, onCreate);
    dc.subscribe(SEND_HEADERS, onSend);
    try {
      return { ok: true, value: await this.als.run(seen, work) };
    } catch (error) {
      return { ok: false, error, unsent: seen.created && !seen.written };
    } finally {
      dc.unsubscribe(CREATE, onCreate);
      dc.unsubscribe(SEND_HEADERS, onSend);
    }
  }
}
