/**
 * The frames of the protocol on stdin, checked before the JSON-RPC reader sees them. vscode-jsonrpc's reader stops
 * making sense of the stream after one bad header (a header with no Content-Length leaves its body to be read as the
 * next header, and so on: the server lives on but never answers again), and buffers whatever a Content-Length
 * announces. Here a frame is passed on as it comes (its body streamed, never held) when its header is well formed:
 * header lines of `Name: value` with one Content-Length, a whole number of at most MAX_MESSAGE_BYTES. Anything else
 * is dropped up to the next `Content-Length:` and said once on stderr per stretch dropped. (Found inside a body
 * instead, a `Content-Length:` heads no good header, since a JSON body holds no raw line break: the search goes on.)
 */
import { Transform, type TransformCallback } from 'node:stream';

/**
 * The largest message read, in bytes: a flow may be 64 MiB (limits.flow_file_bytes), its didOpen a little more once
 * written as a JSON string.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** The longest header kept while its end is awaited (an editor's are under 100 bytes). */
export const MAX_HEADER_BYTES = 8 * 1024;

const END = Buffer.from('\r\n\r\n');
const START = /content-length:/i;

/** The length of a header's body, or why the header is refused. */
function readHeader(header: string): { length: number } | { why: string } {
  let length: number | undefined;
  for (const line of header.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { why: `a header line without a name: ${JSON.stringify(line.slice(0, 40))}` };
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (length !== undefined) return { why: 'two Content-Length headers' };
    if (!/^\d{1,12}$/.test(value)) return { why: `Content-Length ${JSON.stringify(value.slice(0, 20))}` };
    length = Number(value);
    if (length > MAX_MESSAGE_BYTES) return { why: `a message of ${length} bytes (at most ${MAX_MESSAGE_BYTES})` };
  }
  return length === undefined ? { why: 'a header without Content-Length' } : { length };
}

/** Passes well-formed frames on; drops the rest, up to the next header (`report`: once per stretch dropped). */
export class FrameGuard extends Transform {
  /** The bytes of a header not ended yet (or of a stretch being dropped). */
  private head: Buffer = Buffer.alloc(0);
  /** The bytes of the current frame's body still to pass on (0: a header comes next). */
  private body = 0;
  /** A stretch is being dropped (said already). */
  private dropping = false;

  constructor(private readonly report: (why: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let data: Buffer | undefined = chunk;
    while (data !== undefined) {
      if (this.body > 0) {
        if (data.length === 0) break;
        const n = Math.min(this.body, data.length);
        this.push(data.subarray(0, n));
        this.body -= n;
        data = data.subarray(n);
        continue;
      }
      if (data.length > 0) this.head = this.head.length === 0 ? data : Buffer.concat([this.head, data]);
      data = this.takeHeader();
    }
    done();
  }

  /**
   * Reads the header at the start of `head`: when it is whole and good, passes it on and returns what follows it (the
   * body, the next frames); a bad one is dropped and an empty buffer returned (`head` holds the next frame, if any,
   * to read next). Undefined: more bytes are needed.
   */
  private takeHeader(): Buffer | undefined {
    if (this.head.length === 0 || (this.dropping && !this.resync())) return undefined;
    const end = this.head.indexOf(END);
    if (end < 0) {
      if (this.head.length <= MAX_HEADER_BYTES) return undefined;
      this.skip(`a header longer than ${MAX_HEADER_BYTES} bytes`);
      return Buffer.alloc(0);
    }
    const header = readHeader(this.head.toString('latin1', 0, end));
    if ('why' in header) {
      this.skip(header.why);
      return Buffer.alloc(0);
    }
    this.push(this.head.subarray(0, end + END.length));
    const rest = this.head.subarray(end + END.length);
    this.head = Buffer.alloc(0);
    this.body = header.length;
    return rest;
  }

  /** Starts dropping bytes: `head` up to the next header, if any. */
  private skip(why: string): void {
    if (!this.dropping) this.report(`callscript lsp: dropped input that is no message of the protocol (${why})`);
    this.dropping = true;
    // the bad header's own first line is passed over: the search starts after it
    this.head = this.head.subarray(1);
    this.resync();
  }

  /** In a stretch being dropped: keeps `head` from the next `Content-Length:` on (true when one is found). */
  private resync(): boolean {
    const text = this.head.toString('latin1');
    const m = START.exec(text);
    if (!m) {
      // a header's name may be cut between two chunks: the end is kept, no more
      this.head = this.head.subarray(Math.max(0, this.head.length - 16));
      return false;
    }
    this.head = this.head.subarray(m.index);
    this.dropping = false;
    return true;
  }
}
