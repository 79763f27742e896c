/**
 * src/cli/log-format.ts: which format LOG_FORMAT and the terminal give, and what a
 * readable line looks like (the processes' own output: test/deploy/start.test.ts).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { logFormat, logStream, logStreamFor } from '../../src/cli/log-format.js';

describe('logFormat', () => {
  it('unset, empty or auto: pretty on a terminal, JSON otherwise', () => {
    for (const env of [{}, { LOG_FORMAT: '' }, { LOG_FORMAT: 'auto' }]) {
      expect(logFormat(env, true)).toEqual({ ok: true, format: 'pretty' });
      expect(logFormat(env, false)).toEqual({ ok: true, format: 'json' });
    }
  });

  it('json or pretty: that one, terminal or not', () => {
    for (const tty of [true, false]) {
      expect(logFormat({ LOG_FORMAT: 'json' }, tty)).toEqual({ ok: true, format: 'json' });
      expect(logFormat({ LOG_FORMAT: 'pretty' }, tty)).toEqual({ ok: true, format: 'pretty' });
    }
  });

  it.each([
    'JSON',
    'Pretty',
    'json ',
    ' json',
    'xml',
    'pretty,json',
    'text',
    'pino-pretty',
    '1',
    'x'.repeat(10_000),
    '"json"\n',
  ])('refuses %j, naming the values it takes', (v) => {
    expect(logFormat({ LOG_FORMAT: v }, false)).toEqual({
      ok: false,
      message:
        `LOG_FORMAT must be json, pretty or auto (json when stdout is not a terminal), ` + `not ${JSON.stringify(v)}`,
    });
    expect(logStreamFor({ LOG_FORMAT: v }, { isTTY: true }).ok).toBe(false);
  });

  it('logStreamFor: no stream for JSON (pino writes its own lines), a stream for pretty', () => {
    expect(logStreamFor({}, { isTTY: false })).toEqual({ ok: true, format: 'json', stream: undefined });
    const p = logStreamFor({}, {});
    expect(p).toMatchObject({ ok: true, format: 'json' });
    const t = logStreamFor({ LOG_FORMAT: 'pretty' }, { isTTY: false });
    expect(t.ok && t.stream !== undefined).toBe(true);
  });
});

describe('the readable format', () => {
  function capture() {
    let text = '';
    const out = new Writable({
      write(chunk, _e, cb) {
        text += String(chunk);
        cb();
      },
    });
    return { out, text: () => text };
  }

  it('one line per entry: local time, level, pid, message, then the fields as JSON; no hostname', () => {
    const c = capture();
    const log = pino({ level: 'info' }, logStream('pretty', c.out)!);
    log.warn({ code: 'CALL_LIMIT', callid: '18446744073709551615', flow: 'desk' }, 'too many calls');
    log.debug('not at info');
    expect(c.text()).toMatch(
      new RegExp(
        `^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] WARN \\(${process.pid}\\): too many calls ` +
          `\\{"code":"CALL_LIMIT","callid":"18446744073709551615","flow":"desk"\\}\\n$`,
      ),
    );
  });

  it('an error: its message and stack below the line', () => {
    const c = capture();
    const log = pino({ level: 'info' }, logStream('pretty', c.out)!);
    log.error({ err: new Error('store down') }, 'reload failed');
    const lines = c.text().split('\n');
    expect(lines[0]).toMatch(/\] ERROR \(\d+\): reload failed\s*$/);
    expect(c.text()).toContain('"message": "store down"');
    expect(c.text()).toMatch(/Error: store down\n\s+at /);
  });
});
