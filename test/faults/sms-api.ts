/**
 * A fake SMS REST API (the send of v1.1) for fault tests: it holds the sends `hold` picks
 * (the steps sending them stay in flight) until `release()`, and answers the others at
 * once. The hash of an SMS names its call and how many sends that call made:
 * SMS<callid>N<k>, so a reply saying it tells which send it came from.
 */
import { createServer, type ServerResponse } from 'node:http';
import { CALLID_HEADER } from '../../src/sms/client.js';

export interface SmsApi {
  /** The base URL of the REST API (SMS_BASE_URL). */
  url: string;
  /** The hashes of the sends received, in order (held or answered). */
  received(): string[];
  /** Sends held now. */
  held(): number;
  /** Answers the held sends, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

export async function smsApi(hold: (callid: string, k: number) => boolean = () => true): Promise<SmsApi> {
  const received: string[] = [];
  const held: { hash: string; res: ServerResponse }[] = [];
  const perCall = new Map<string, number>();
  let open = false;
  const answer = (hash: string, res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', data: hash }));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const callid = String(req.headers[CALLID_HEADER]);
      const k = (perCall.get(callid) ?? 0) + 1;
      perCall.set(callid, k);
      const hash = `SMS${callid}N${k}`;
      received.push(hash);
      if (open || !hold(callid, k)) answer(hash, res);
      else held.push({ hash, res });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/rest/v1.1`,
    received: () => [...received],
    held: () => held.length,
    release: () => {
      open = true;
      for (const h of held.splice(0)) answer(h.hash, h.res);
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
