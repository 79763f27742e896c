/**
 * How the server's log lines look: pino JSON lines when stdout is not a terminal (a pipe,
 * a file, journald, Docker's log driver: what log shippers read), and a readable line per
 * entry on a terminal (pino-pretty: local time, level, pid, message, then the fields).
 * `LOG_FORMAT=json` or `LOG_FORMAT=pretty` forces one (`auto` or unset: by the terminal).
 * Colours only on a terminal that takes them (NO_COLOR / FORCE_COLOR are honoured).
 */
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';

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
 * The stream pino writes to: undefined for JSON (pino's own synchronous stdout), a
 * synchronous pino-pretty stream for the readable format (a process that exits right after
 * its last line loses none).
 */
export function logStream(
  format: LogFormat,
  destination: number | NodeJS.WritableStream = 1,
): DestinationStream | undefined {
  if (format === 'json') return undefined;
  return pretty({
    destination,
    // on stdout, colours when it is a terminal that takes them (colorette's check); elsewhere none
    ...(destination === 1 ? {} : { colorize: false }),
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'hostname',
    // one line per entry: a request's fields stay next to its message when lines interleave
    singleLine: true,
    errorLikeObjectKeys: ['err', 'error'],
  });
}

/** Both at once: the stream for this process's `LOG_FORMAT` and stdout, or why it is refused. */
export function logStreamFor(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean } = process.stdout,
): { ok: true; format: LogFormat; stream: DestinationStream | undefined } | { ok: false; message: string } {
  const f = logFormat(env, stdout.isTTY === true);
  return f.ok ? { ...f, stream: logStream(f.format) } : f;
}
