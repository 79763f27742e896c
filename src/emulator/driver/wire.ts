/**
 * The HTTP side of the real-time driver: the RT.Request body exactly as the service
 * writes it (all 14 fields in the reference's order, `callid` and `command_id` as bare
 * JSON integers digit for digit, `variables` as the raw JSON text the server last sent),
 * and one POST with the reply time limit and a size limit (a reply is read up to
 * MAX_REPLY_BYTES: a server that streams without end cannot fill the emulator's memory).
 */

/** The largest reply read: room for a play_wav_data of about 3 minutes. */
export const MAX_REPLY_BYTES = 4 * 1024 * 1024;

export interface RequestFields {
  app: string;
  /** Decimal digits; may exceed 2^53. */
  callid: string;
  request_hash: string | null;
  cli_name: string;
  cli_number: string;
  date_started: string;
  number: string;
  command: string;
  /** Decimal digits, echoed as the server wrote them. */
  command_id: string;
  command_result: string;
  command_error: string;
  call_status: string;
  cdr_field: string;
  /** Raw JSON text of an object. */
  variables: string;
}

export function requestBody(f: RequestFields): string {
  if (!/^(0|[1-9][0-9]*)$/.test(f.callid)) throw new Error(`callid must be decimal digits, got ${f.callid}`);
  if (!/^(0|[1-9][0-9]*)$/.test(f.command_id))
    throw new Error(`command_id must be decimal digits, got ${f.command_id}`);
  const s = JSON.stringify;
  return (
    `{"app":${s(f.app)},"callid":${f.callid},"request_hash":${s(f.request_hash)},"cli_name":${s(f.cli_name)},` +
    `"cli_number":${s(f.cli_number)},"date_started":${s(f.date_started)},"number":${s(f.number)},` +
    `"command":${s(f.command)},"command_id":${f.command_id},"command_result":${s(f.command_result)},` +
    `"command_error":${s(f.command_error)},"call_status":${s(f.call_status)},"cdr_field":${s(f.cdr_field)},` +
    `"variables":${f.variables}}`
  );
}

export type PostResult =
  | { kind: 'reply'; status: number; contentType: string; text: string; ms: number }
  | { kind: 'too_large'; status: number; ms: number }
  | { kind: 'timeout'; ms: number }
  | { kind: 'network'; message: string; ms: number };

export interface PostOptions {
  /** `Basic ...` or undefined for none. */
  authorization?: string;
  timeoutMs: number;
}

export async function postRequest(url: string, body: string, opts: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), opts.timeoutMs);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'callscript-emulator/0.1',
    accept: 'application/json',
  };
  if (opts.authorization) headers.authorization = opts.authorization;
  try {
    const res = await fetch(url, { method: 'POST', body, headers, signal: ctl.signal, redirect: 'manual' });
    const text = await readCapped(res, MAX_REPLY_BYTES);
    if (text === undefined) {
      ctl.abort();
      return { kind: 'too_large', status: res.status, ms: Math.round(performance.now() - started) };
    }
    return {
      kind: 'reply',
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      text,
      ms: Math.round(performance.now() - started),
    };
  } catch (err) {
    const ms = Math.round(performance.now() - started);
    if (ctl.signal.aborted) return { kind: 'timeout', ms };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { kind: 'network', message: e.cause?.code ?? e.cause?.message ?? e.message, ms };
  } finally {
    clearTimeout(timer);
  }
}

/** The body as text, or undefined (and the rest not read) once it is over `max` bytes. */
async function readCapped(res: Response, max: number): Promise<string | undefined> {
  if (Number(res.headers.get('content-length') ?? 0) > max || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    return res.body ? undefined : '';
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
