/**
 * The telephony service's side of calls, played with fetch against real servers: each
 * request of a call goes where `route` says, and a request that fails (connection refused
 * or reset, 503) is sent again, to where `route` says for the next attempt, as the service
 * retries on another instance. A 4xx or a 500 is not retried: it is an answer, and the
 * test sees it.
 */
import { expect } from 'vitest';
import { rtBody, type RtFields } from '../helpers/rt.js';
import { sleep } from '../helpers/processes.js';
import { parseAnswer, type RawAnswer } from '../helpers/socket.js';

export interface Sent {
  base: string;
  status: number;
  text: string;
  json: any;
}

/** One POST of an RT.Request; throws on a network error (refused, reset, timeout). */
export async function postRt(base: string, path: string, fields: Partial<RtFields>, timeoutMs = 15_000): Promise<Sent> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: rtBody(fields),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { base, status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

export interface Command {
  command: string;
  command_id: number;
  params: Record<string, unknown>;
}

export interface CallRun {
  callid: string;
  /** The commands the call was answered, in order (deadline fallbacks left out). */
  commands: Command[];
  /** Requests that failed and were sent again: where, and why. */
  failures: { base: string; why: string }[];
  /** Deadline fallbacks (`wait` echoing the request's command_id) answered. */
  fallbacks: number;
  /** The answer to the call's last request (call_status HANGUP). */
  end: Sent;
}

export interface CallPlan {
  callid: string;
  /** /rt/<flow> */
  path: string;
  /** Where the k-th request of the call goes on its `attempt`-th try (from 0). */
  route(k: number, attempt: number): string;
  /** The result the caller gives for a command (read: the digits...). */
  result(c: Command): string;
  /** Told just before each send and just after its outcome (in-flight bookkeeping). */
  sending?(base: string): void;
  done?(base: string, ok: boolean): void;
  /** Awaited before request k (from 1) is sent: the caller's time, or a test's gate. */
  before?(k: number): Promise<void> | void;
  maxAttempts?: number;
  /** A request not answered within this long is given up and sent again (default 15 s). */
  timeoutMs?: number;
}

/** Plays a whole call: first request, each command's result, the HANGUP report. Throws on an answer other than 200. */
export async function playCall(plan: CallPlan): Promise<CallRun> {
  const run: CallRun = {
    callid: plan.callid,
    commands: [],
    failures: [],
    fallbacks: 0,
    end: undefined as unknown as Sent,
  };
  let k = 0;
  const deliver = async (fields: Partial<RtFields>): Promise<Sent> => {
    const max = plan.maxAttempts ?? 30;
    for (let attempt = 0; ; attempt++) {
      const base = plan.route(k, attempt);
      plan.sending?.(base);
      let why: string;
      try {
        const r = await postRt(base, plan.path, { callid: plan.callid, ...fields }, plan.timeoutMs);
        plan.done?.(base, r.status !== 503);
        if (r.status !== 503) {
          k++;
          return r;
        }
        why = `503 ${r.json?.error?.code}`;
      } catch (err) {
        plan.done?.(base, false);
        why = networkCode(err);
      }
      run.failures.push({ base, why });
      if (attempt + 1 >= max)
        throw new Error(
          `call ${plan.callid}: request ${k} failed ${max} times: ${run.failures.map((f) => f.why).join(', ')}`,
        );
      await sleep(Math.min(200, 10 * (attempt + 1)));
    }
  };
  let fields: Partial<RtFields> = { command: '', command_id: 0, command_result: '' };
  for (;;) {
    const r = await deliver(fields);
    if (r.status !== 200)
      throw new Error(`call ${plan.callid}: HTTP ${r.status} ${r.text} for ${JSON.stringify(fields)}`);
    const c = r.json as Command;
    if (c.command === 'wait' && c.command_id === fields.command_id) {
      // a deadline fallback: the service runs it and reports it (it stands for the request it replaced)
      run.fallbacks++;
      fields = { command: 'wait', command_id: c.command_id, command_result: '' };
      continue;
    }
    run.commands.push({ command: c.command, command_id: c.command_id, params: c.params });
    if (c.command === 'hangup') {
      run.end = await deliver({
        command: 'hangup',
        command_id: c.command_id,
        command_result: '',
        call_status: 'HANGUP',
      });
      return run;
    }
    await plan.before?.(k);
    fields = { command: c.command, command_id: c.command_id, command_result: plan.result(c) };
  }
}

/** ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET..., from fetch's error and its causes. */
export function networkCode(err: unknown): string {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return err instanceof Error ? err.name + ': ' + err.message : String(err);
}

/** The raw text of a POST of this RT.Request body, for half-sent and pipelined requests on a socket. */
export function rawPost(path: string, body: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
    `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** The responses written on a connection, in order. */
export function responses(text: string): RawAnswer[] {
  return text
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter(Boolean)
    .map((t) => parseAnswer(t, false, 0));
}

/**
 * The answers on a connection whose first request was in flight when the server was told
 * to stop and whose second came during the drain: the first answered 200 as usual, the
 * second 503 SHUTTING_DOWN, its connection closed. Returns the first's reply.
 */
export function drainedAnswers(text: string): unknown {
  const [first, second, ...more] = responses(text);
  expect(more).toEqual([]);
  expect(first!.status).toBe(200);
  expect(second!.status).toBe(503);
  expect(second!.headers.connection).toBe('close');
  expect(JSON.parse(second!.body)).toEqual({
    error: { code: 'SHUTTING_DOWN', message: 'the server is shutting down: send the request to another instance' },
  });
  return JSON.parse(first!.body);
}
