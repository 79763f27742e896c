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
      throw new ServiceError('SERVICE_BAD_REPLY', `${method}: the answer is larger than ${maxBytes} bytes`, method, {
        status: res.status,
      });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export { describeCode, systemCode } from '../sms/net-errors.js';
