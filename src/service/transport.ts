/** What the JSON-RPC client needs of the transport: a capped body, and system errors said plainly. */
import { ServiceError } from './errors.js';

/** The body as text, refused past maxBytes (a server that sends without end). */
export async function readCapped(res: Response, method: string, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ServiceError('SERVICE_BAD_REPLY', `${method}: the answer is larger than ${maxBytes} bytes`, method, { status: res.status });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function systemCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors[0]) {
      const c = (errors[0] as { code?: unknown }).code;
      if (typeof c === 'string') return c;
    }
  }
  return undefined;
}

export function describeCode(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the server';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return 'network error';
  }
}
