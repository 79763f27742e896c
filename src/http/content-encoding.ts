/**
 * Request bodies are read as sent: a body with a Content-Encoding other than identity
 * (gzip, deflate, br, anything) is refused with 415 UNSUPPORTED_ENCODING before it is
 * read, instead of being taken as text (Fastify does not decompress) or decompressed
 * past the body limit. A preParsing hook: it runs after the routes' credential checks.
 */
import type { FastifyReply, preParsingHookHandler } from 'fastify';

type SendError = (reply: FastifyReply, status: number, code: string, message: string) => FastifyReply;

/**
 * The hook; `send` answers with the plugin's error envelope. Callback style: a refused
 * request never calls `done`, so its body is not read and no handler runs, whenever the
 * reply finishes.
 */
export function refuseContentEncoding(send: SendError): preParsingHookHandler {
  return (req, reply, payload, done) => {
    // a transfer coding other than chunked (gzip, deflate...): Node would hand over the coded bytes as the body
    const te = req.headers['transfer-encoding'];
    if (te !== undefined && te.split(',').some((c) => !['chunked', 'identity'].includes(c.trim().toLowerCase()))) {
      const shown = te.length > 40 ? te.slice(0, 40) + '…' : te;
      return send(
        reply,
        415,
        'UNSUPPORTED_ENCODING',
        `Transfer-Encoding ${JSON.stringify(shown)} is not supported: send the body chunked or with a ` +
          `Content-Length, uncompressed`,
      );
    }
    const raw = req.headers['content-encoding'];
    if (raw === undefined || raw.trim().toLowerCase() === 'identity') return done(null, payload);
    const shown = raw.length > 40 ? raw.slice(0, 40) + '…' : raw;
    send(
      reply,
      415,
      'UNSUPPORTED_ENCODING',
      `Content-Encoding ${JSON.stringify(shown)} is not supported: send the body uncompressed (identity)`,
    );
  };
}
