/**
 * The frames of the protocol as they come in (framing.ts): good ones are passed on byte for byte, in any cut; a bad
 * header, a Content-Length that is no number or too large, a header that never ends, are dropped up to the next
 * frame, once said, and the server answers that frame (behind vscode-jsonrpc's reader, a bad header left it deaf).
 */
import { PassThrough } from 'node:stream';
import {
  createConnection,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver/node';
import { describe, expect, it } from 'vitest';
import { FrameGuard, MAX_HEADER_BYTES, MAX_MESSAGE_BYTES } from '../../src/lsp/framing.js';
import { startServer } from '../../src/lsp/server.js';

const frame = (o: unknown) => {
  const body = Buffer.from(JSON.stringify(o));
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
};

/** What the guard passes on for `input` written in `cuts` (byte offsets), and what it reports. */
async function through(input: Buffer, cuts: number[] = []): Promise<{ out: string; reports: string[] }> {
  const reports: string[] = [];
  const guard = new FrameGuard((why) => reports.push(why));
  const chunks: Buffer[] = [];
  guard.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => guard.on('end', resolve));
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    guard.write(input.subarray(at, cut));
    at = cut;
  }
  guard.end();
  await ended;
  return { out: Buffer.concat(chunks).toString(), reports };
}

const A = frame({ jsonrpc: '2.0', id: 1, method: 'a', params: { text: 'Content-Length: 3 café' } });
const B = frame({ jsonrpc: '2.0', id: 2, method: 'b' });

describe('FrameGuard', () => {
  it('passes good frames on as they are, however the stream is cut', async () => {
    const input = Buffer.concat([A, B]);
    expect(await through(input)).toEqual({ out: input.toString(), reports: [] });
    const everyByte = Array.from({ length: input.length - 1 }, (_, i) => i + 1);
    expect(await through(input, everyByte)).toEqual({ out: input.toString(), reports: [] });
    const withType = Buffer.concat([Buffer.from('Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n'), A]);
    expect((await through(withType)).out).toBe(withType.toString());
  });

  it.each([
    ['a header line without a name', 'Garbage-Header\r\n\r\nxxxx', 'a header line without a name: "Garbage-Header"'],
    ['no Content-Length', 'Content-Type: x\r\n\r\n{}', 'a header without Content-Length'],
    ['a Content-Length that is no number', 'Content-Length: abc\r\n\r\n', 'Content-Length "abc"'],
    ['a negative Content-Length', 'Content-Length: -5\r\n\r\n', 'Content-Length "-5"'],
    [
      'a Content-Length over the bound',
      `Content-Length: ${MAX_MESSAGE_BYTES + 1}\r\n\r\n{"jsonrpc":"2.0"}`,
      `a message of ${MAX_MESSAGE_BYTES + 1} bytes (at most ${MAX_MESSAGE_BYTES})`,
    ],
    ['binary bytes', '\u0000\u0001\u00ff\r\n\r\n', 'a header line without a name: "\\u0000\\u0001ÿ"'],
  ])('drops %s up to the next frame, said once', async (_name, bad, why) => {
    const input = Buffer.concat([A, Buffer.from(bad, 'latin1'), B]);
    const { out, reports } = await through(input);
    expect(out).toBe(Buffer.concat([A, B]).toString());
    expect(reports).toEqual([`callscript lsp: dropped input that is no message of the protocol (${why})`]);
  });

  it('drops a header with two Content-Length (the reader takes the last): the second heads a frame', async () => {
    const bad = 'Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}';
    const { out, reports } = await through(Buffer.concat([A, Buffer.from(bad), B]));
    expect(out).toBe(`${A.toString()}Content-Length: 2\r\n\r\n{}${B.toString()}`);
    expect(reports).toEqual([
      'callscript lsp: dropped input that is no message of the protocol (two Content-Length headers)',
    ]);
  });

  it('drops a header that never ends, keeping at most MAX_HEADER_BYTES of it, then finds the next frame', async () => {
    const junk = Buffer.alloc(10 * MAX_HEADER_BYTES, 'x');
    const cuts = Array.from({ length: 20 }, (_, i) => A.length + (i + 1) * (MAX_HEADER_BYTES / 2));
    const { out, reports } = await through(Buffer.concat([A, junk, B]), cuts);
    expect(out).toBe(Buffer.concat([A, B]).toString());
    const why = `a header longer than ${MAX_HEADER_BYTES} bytes`;
    expect(reports).toEqual([`callscript lsp: dropped input that is no message of the protocol (${why})`]);
  });

  it('finds the next frame when its Content-Length is cut between two chunks', async () => {
    const input = Buffer.concat([Buffer.from('junk\r\n\r\n'), B]);
    const { out } = await through(input, [8 + 7]); // 'Content' | '-Length: ...'
    expect(out).toBe(B.toString());
  });
});

describe('the server behind the guard', () => {
  it('answers the request that follows garbage', async () => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const reports: string[] = [];
    const server = createConnection(
      new StreamMessageReader(toServer.pipe(new FrameGuard((why) => reports.push(why)))),
      new StreamMessageWriter(toClient),
    );
    startServer(server, { debounceMs: 0 });
    const rpc = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
    rpc.listen();
    try {
      toServer.write('Garbage-Header\r\n\r\nxxxx');
      const init = await rpc.sendRequest<{ serverInfo: unknown }>('initialize', {
        processId: null,
        rootUri: null,
        capabilities: {},
      });
      expect(init.serverInfo).toEqual({ name: 'callscript' });
      expect(reports).toHaveLength(1);
    } finally {
      rpc.dispose();
      server.dispose();
    }
  });
});
