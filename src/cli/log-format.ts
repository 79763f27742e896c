/**
 * How the server's log lines look: pino JSON lines when stdout is not a terminal (a pipe,
 * a file, journald, Docker's log driver: what log shippers read), and a readable line per
 * entry on a terminal (pino-pretty: local time, level, pid, message, then the fields).
 * `LOG_FORMAT=json` or `LOG_FORMAT=pretty` forces one (`auto` or unset: by the terminal).
 * Colours only on a terminal that takes them (NO_COLOR / FORCE_COLOR are honoured).
 */
import { pino, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { printable, printableColoured } from '../terminal/printable.js';

export type LogFormat = 'json' | 'pretty';

/** The format for `LOG_FORMAT` and whether stdout is a terminal, or why the value is refused. */
export function logFormat(
  env: NodeJS.ProcessEnv,
  stdoutIsTTY: boolean,
): { ok: true; format: LogFormat } | { ok: false; message: string } {
  const v = env.LOG_FORMAT;
  if (v === undefined || v === '' || v === 'auto') return { ok: true, format: stdoutIsTTY ? 'pretty' : 'json' };
  if (v === 'json' || v === 'pretty') return { ok: true, format: v };
  return {
    ok: false,
    message: `LOG_FORMAT must be json, pretty or auto (json when stdout is not a terminal), not ${JSON.stringify(v)}`,
  };
}

/**
 * The stream pino writes to: undefined for JSON (pino's own synchronous stdout), else each entry
 * made readable by pino-pretty and written at once (synchronously: a process that exits right after
 * its last line loses none). What an entry holds may come from callers, flows or the service: its
 * control characters are escaped (a message's line feed too: an entry stays one line), pino-pretty's
 * colours stay (src/terminal/printable.ts).
 */
export function logStream(
  format: LogFormat,
  destination: number | NodeJS.WritableStream = 1,
): DestinationStream | undefined {
  if (format === 'json') return undefined;
  const prettify = prettyFactory({
    // on stdout, colours when it is a terminal that takes them (colorette's check); elsewhere none
    ...(destination === 1 ? {} : { colorize: false }),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'hostname',
    // one line per entry: a request's fields stay next to its message when lines interleave
    singleLine: true,
    errorLikeObjectKeys: ['err', 'error'],
    messageFormat: (log, key) => (key in log ? printable(String(log[key])) : ''),
  });
  const out = typeof destination === 'number' ? pino.destination({ dest: destination, sync: true }) : destination;
  // a reader that went away (`callscript serve | head`): the lines are dropped, the server runs on
  let gone = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    gone = true;
  });
  return {
    write(line: string) {
      if (!gone) out.write(printableColoured(prettify(line)));
    },
  };
}

/** Both at once: the stream for this process's `LOG_FORMAT` and stdout, or why it is refused. */
export function logStreamFor(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean } = process.stdout,
): { ok: true; format: LogFormat; stream: DestinationStream | undefined } | { ok: false; message: string } {
  const f = logFormat(env, stdout.isTTY === true);
  return f.ok ? { ...f, stream: logStream(f.format) } : f;
}
