/**
 * Conformance checking of the customer server: each bad reply is a violation naming the
 * offending field, and the emulator hangs the call up (a terminal HANGUP request).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cmd, fakeServer, startEmulator, type Answer, type Running } from './helpers.js';

let e: Running;
beforeAll(async () => {
  e = await startEmulator();
});
afterAll(async () => e.close());

/** One call against a server whose first reply is `first` (then hangup); the transcript and what the server saw. */
async function oneReply(first: Answer, extra: Record<string, unknown> = {}) {
  const s = await fakeServer((_r, n) => (n === 1 ? first : { body: cmd('hangup', 9) }));
  try {
    const t = await e.call({ url: s.url, ...extra });
    return { t, seen: s.seen.map((x) => x.json) };
  } finally {
    await s.close();
  }
}

const bad: [string, Answer, string, string, RegExp][] = [
  [
    'an out-of-bounds param',
    { body: cmd('read', 1, { media_id: 'TTS|TTS_EN-GB_SERENA|Hi', max_digits: 25 }) },
    'OUT_OF_BOUNDS',
    'params.max_digits',
    /read.max_digits is 25; it must be from 1 to 20/,
  ],
  [
    'an unknown command',
    { body: cmd('say', 1, { text: 'Hi' }) },
    'UNKNOWN_COMMAND',
    'command',
    /"say" is not a command/,
  ],
  [
    'a misspelt command',
    { body: cmd('dialot', 1, {}) },
    'UNKNOWN_COMMAND',
    'command',
    /"dialot" is not a command \(did you mean dialout\?\)/,
  ],
  [
    'a missing command_id',
    { body: { command: 'play', params: { media_id: '123' }, variables: {} } },
    'MISSING_FIELD',
    'command_id',
    /command_id is missing/,
  ],
  [
    'a string command_id',
    { body: { command: 'play', command_id: '1', params: { media_id: '123' }, variables: {} } },
    'BAD_TYPE',
    'command_id',
    /command_id must be a non-negative JSON integer, got the string "1"/,
  ],
  [
    'a negative command_id',
    { body: cmd('play', -1, { media_id: '123' }) },
    'BAD_TYPE',
    'command_id',
    /got the number -1/,
  ],
  [
    'a body that is not JSON',
    { body: '<html>oops</html>', type: 'text/html' },
    'NOT_JSON',
    'body',
    /the body is not JSON .*<html>oops<\/html>/,
  ],
  ['an empty body', { body: '' }, 'NOT_JSON', 'body', /not JSON/],
  ['a JSON array', { body: '[]' }, 'NOT_OBJECT', 'body', /must be a JSON object \(an RT.Response\)/],
  [
    'HTTP 500',
    { status: 500, body: { error: 'boom' } },
    'HTTP_STATUS',
    'status',
    /HTTP 500: a reply must be HTTP 200; body: \{"error":"boom"\}/,
  ],
  ['HTTP 404', { status: 404, body: 'Not Found', type: 'text/plain' }, 'HTTP_STATUS', 'status', /HTTP 404/],
  [
    'params as a list',
    { body: { command: 'hangup', command_id: 1, params: [], variables: {} } },
    'BAD_TYPE',
    'params',
    /params must be a JSON object \(\{\} when empty\), got a list/,
  ],
  [
    'missing params',
    { body: { command: 'hangup', command_id: 1, variables: {} } },
    'MISSING_FIELD',
    'params',
    /params is missing/,
  ],
  [
    'variables as a list',
    { body: { command: 'hangup', command_id: 1, params: {}, variables: [] } },
    'BAD_TYPE',
    'variables',
    /variables must be a JSON object/,
  ],
  [
    'missing variables',
    { body: { command: 'hangup', command_id: 1, params: {} } },
    'MISSING_FIELD',
    'variables',
    /variables is missing/,
  ],
  [
    'an unknown param',
    { body: cmd('read', 1, { media_id: '12', max_digit: 2 }) },
    'UNKNOWN_PARAM',
    'params.max_digit',
    /read has no param max_digit \(did you mean max_digits\?\)/,
  ],
  [
    'a param of a command that takes none',
    { body: cmd('hangup', 1, { now: true }) },
    'UNKNOWN_PARAM',
    'params.now',
    /hangup has no param now; it takes no params/,
  ],
  ['a missing required param', { body: cmd('play', 1, {}) }, 'MISSING_PARAM', 'params.media_id', /play needs media_id/],
  [
    'a malformed TTS media',
    { body: cmd('play', 1, { media_id: 'TTS|Hello' }) },
    'BAD_FORMAT',
    'params.media_id',
    /a media is an integer media id or TTS\|<voice>\|<text>/,
  ],
  [
    'an empty TTS text',
    { body: cmd('play', 1, { media_id: 'TTS|TTS_EN-GB_SERENA| ' }) },
    'BAD_FORMAT',
    'params.media_id',
    /the TTS text is empty/,
  ],
  [
    'a media of the wrong type',
    { body: cmd('play', 1, { media_id: true }) },
    'BAD_TYPE',
    'params.media_id',
    /must be a media/,
  ],
  [
    'a bad enum value',
    { body: cmd('dialout', 1, { targets: [{ number: '+33123456789', timeout: 20 }], ringtone: 'BEEP' }) },
    'BAD_VALUE',
    'params.ringtone',
    /dialout.ringtone "BEEP" is not one of MUSIC, RING/,
  ],
  [
    'an int as a string',
    { body: cmd('wait', 1, { wait: '5' }) },
    'BAD_TYPE',
    'params.wait',
    /wait.wait must be a JSON integer, got the string "5"/,
  ],
  ['a float int', { body: cmd('wait', 1, { wait: 2.5 }) }, 'BAD_TYPE', 'params.wait', /got the number 2.5/],
  [
    'a bool as a number',
    { body: cmd('simple_conference', 1, { id: 'r1', auto_leave_when_alone: 1 }) },
    'BAD_TYPE',
    'params.auto_leave_when_alone',
    /must be true or false, got the number 1/,
  ],
  [
    'a callid as a string',
    { body: cmd('hangup_callid', 1, { callid: '42' }) },
    'BAD_TYPE',
    'params.callid',
    /must be a JSON integer \(the callid digit for digit\), got the string "42"/,
  ],
  [
    'a callid over 64 bits',
    { body: '{"command":"hangup_callid","command_id":1,"params":{"callid":18446744073709551616},"variables":{}}' },
    'BAD_FORMAT',
    'params.callid',
    /a callid is at most 18446744073709551615/,
  ],
  [
    'a param and its older spelling',
    { body: cmd('wait', 1, { wait: 2, seconds: 2 }) },
    'DUPLICATE_PARAM',
    'params.seconds',
    /wait has both wait and its older spelling seconds: give wait only/,
  ],
  [
    'an older spelling out of bounds',
    { body: cmd('wait', 1, { seconds: 31 }) },
    'OUT_OF_BOUNDS',
    'params.seconds',
    /wait.seconds is 31; it must be from 1 to 30/,
  ],
  [
    'no targets',
    { body: cmd('dialout', 1, { targets: [] }) },
    'OUT_OF_BOUNDS',
    'params.targets',
    /dialout.targets is empty/,
  ],
  [
    'a target timeout out of bounds',
    { body: cmd('dialout', 1, { targets: [{ number: '+33123456789', timeout: 3 }] }) },
    'OUT_OF_BOUNDS',
    'params.targets[0].timeout',
    /from 5 to 300 seconds/,
  ],
  [
    'a national target number',
    { body: cmd('dialout', 1, { targets: [{ number: '0123456789', timeout: 30 }] }) },
    'BAD_FORMAT',
    'params.targets[0].number',
    /"0123456789": an E.164 number/,
  ],
  [
    'a bad cli',
    { body: cmd('dialout', 1, { targets: [{ number: '+33123456789' }], cli: 'HIDDEN' }) },
    'BAD_FORMAT',
    'params.cli',
    /a caller id is an E.164 number or BLOCKED/,
  ],
  [
    'a long cdr_field',
    { body: cmd('dialout', 1, { targets: [{ number: '+33123456789' }], cdr_field: 'x'.repeat(33) }) },
    'BAD_FORMAT',
    'params.cdr_field',
    /at most 32 letters and digits/,
  ],
  [
    'bad DTMF digits',
    { body: cmd('send_dtmf', 1, { digits: '12A' }) },
    'BAD_FORMAT',
    'params.digits',
    /DTMF digits are 0-9, \* and #/,
  ],
  [
    'a PIN with letters',
    { body: cmd('conference', 1, { id: 'room', pin_code: '12ab' }) },
    'BAD_FORMAT',
    'params.pin_code',
    /a PIN is digits only, 10 at most/,
  ],
  [
    'a bad locale',
    { body: cmd('start_call_recording', 1, { locale: 'english' }) },
    'BAD_FORMAT',
    'params.locale',
    /a locale is ll_CC/,
  ],
  [
    'a bad feeds',
    { body: cmd('start_call_recording', 1, { feeds: 'everyone' }) },
    'BAD_VALUE',
    'params.feeds',
    /is not one of all, both, leg_a, leg_b/,
  ],
  [
    'out-of-bounds record',
    { body: cmd('record', 1, { max_duration: 301 }) },
    'OUT_OF_BOUNDS',
    'params.max_duration',
    /from 0 to 300/,
  ],
  [
    'out-of-bounds wait_for_silence',
    { body: cmd('wait_for_silence', 1, { silence_ms: 0 }) },
    'OUT_OF_BOUNDS',
    'params.silence_ms',
    /from 1 to 5000/,
  ],
  [
    'out-of-bounds play_talk_detect',
    { body: cmd('play_talk_detect', 1, { media_id: '1', analysistime_ms: 60001 }) },
    'OUT_OF_BOUNDS',
    'params.analysistime_ms',
    /from 1 to 60000/,
  ],
];

describe('each violation is reported with its field and ends the call', () => {
  it.each(bad)('%s: %s at %s', async (_name, answer, code, field, re) => {
    const { t, seen } = await oneReply(answer);
    expect(t.violations).toHaveLength(1);
    expect(t.violations[0]).toEqual({ request: 1, code, field, message: expect.stringMatching(re) });
    expect(t.ended_by).toBe('emulator');
    expect(t.end_reason).toMatch(new RegExp(`^protocol violation: ${code} `));
    // The emulator hangs up: a terminal request right after the first, carrying the previous (no) command.
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({
      call_status: 'HANGUP',
      command: '',
      command_id: 0,
      command_result: '',
      command_error: '',
    });
    expect(t.final).toMatchObject({ request: 2, call_status: 'HANGUP', http_status: 200 });
  });
});

it('several violations of one reply are all reported; the refused command is in the transcript', async () => {
  const { t } = await oneReply({
    body: {
      command: 'read',
      command_id: 1,
      params: { media_id: 'TTS|x', max_digits: 0, timeout_ms: 50, colour: 'red' },
      variables: {},
    },
  });
  expect(t.violations.map((v) => `${v.code} ${v.field}`)).toEqual([
    'BAD_FORMAT params.media_id',
    'OUT_OF_BOUNDS params.max_digits',
    'OUT_OF_BOUNDS params.timeout_ms',
    'UNKNOWN_PARAM params.colour',
  ]);
  expect(t.commands).toEqual([
    expect.objectContaining({
      n: 1,
      command: 'read',
      command_id: 1,
      status: 'refused',
      params: { media_id: 'TTS|x', max_digits: 0, timeout_ms: 50, colour: 'red' },
    }),
  ]);
});

it('a reply over the time limit: LATE_REPLY on field time, and the call is hung up', async () => {
  const { t, seen } = await oneReply(
    { body: cmd('play', 1, { media_id: '5' }), delayMs: 600 },
    { reply_timeout_ms: 200 },
  );
  expect(t.violations).toEqual([
    {
      request: 1,
      code: 'LATE_REPLY',
      field: 'time',
      message: 'no reply within 200 ms (the service waits at most 200 ms)',
    },
  ]);
  expect(t.ended_by).toBe('emulator');
  expect(seen.map((s) => s.call_status)).toEqual(['UP', 'HANGUP']);
});

it('a slow but timely reply is a warning, not a violation', async () => {
  const { t } = await oneReply({ body: cmd('hangup', 1), delayMs: 2000 }, { reply_timeout_ms: 2400 });
  expect(t.violations).toEqual([]);
  expect(t.warnings).toEqual([expect.objectContaining({ code: 'SLOW_REPLY', field: 'time' })]);
  expect(t.ended_by).toBe('flow');
});

it('a violation mid-call: the HANGUP carries the last command run and its result', async () => {
  const s = await fakeServer((_r, n) =>
    n === 1
      ? { body: cmd('play', 1, { media_id: '10' }) }
      : n === 2
        ? { body: cmd('wait', 2, { wait: 60 }) }
        : { body: cmd('hangup', 3) },
  );
  try {
    const t = await e.call({ url: s.url });
    expect(t.violations).toEqual([
      { request: 2, code: 'OUT_OF_BOUNDS', field: 'params.wait', message: 'wait.wait is 60; it must be from 1 to 30' },
    ]);
    expect(s.seen.map((x) => [x.json.call_status, x.json.command, x.json.command_id, x.json.command_result])).toEqual([
      ['UP', '', 0, ''],
      ['UP', 'play', 1, '0'],
      ['HANGUP', 'play', 1, '0'],
    ]);
    expect(t.commands.map((c) => [c.command, c.status])).toEqual([
      ['play', 'done'],
      ['wait', 'refused'],
    ]);
  } finally {
    await s.close();
  }
});

it('a server that cannot be reached: NO_REPLY', async () => {
  const s = await fakeServer(() => ({ body: '' }));
  const url = s.url;
  await s.close();
  const t = await e.call({ url });
  expect(t.violations).toEqual([
    {
      request: 1,
      code: 'NO_REPLY',
      field: 'status',
      message: expect.stringMatching(/^the request failed: ECONNREFUSED/),
    },
  ]);
  expect(t.warnings).toEqual([
    expect.objectContaining({ code: 'TERMINAL_REPLY', message: expect.stringMatching(/the terminal request failed/) }),
  ]);
  expect(t.final).toMatchObject({ call_status: 'HANGUP' });
  expect(t.final?.http_status).toBeUndefined();
});

describe('warnings that do not end the call', () => {
  it('a reply Content-Type other than application/json, and an unknown top-level field', async () => {
    const { t } = await oneReply({ body: { ...cmd('play', 1, { media_id: '7' }), comand: 'x' }, type: 'text/plain' });
    expect(t.violations).toEqual([]);
    expect(t.warnings.map((w) => [w.code, w.field])).toEqual([
      ['CONTENT_TYPE', 'content-type'],
      ['UNKNOWN_FIELD', 'comand'],
    ]);
    expect(t.warnings[1]!.message).toMatch(
      /comand is not a field of RT.Response \(did you mean command\?\); the service ignores it/,
    );
    expect(t.commands.map((c) => c.command)).toEqual(['play', 'hangup']);
  });

  it(
    'older spellings are accepted and reported: seconds (wait), digit (send_dtmf), timeout_ms ' +
      '(wait_for_silence, in ms)',
    async () => {
      const replies = [
        cmd('wait', 1, { seconds: 3 }),
        cmd('send_dtmf', 2, { digit: '12#' }),
        cmd('wait_for_silence', 3, { silence_ms: 500, timeout_ms: 9000 }),
        cmd('hangup', 4),
      ];
      const s = await fakeServer((_r, n) => ({ body: replies[n - 1] ?? cmd('hangup', 9) }));
      try {
        const t = await e.call({ url: s.url, caller: { actions: [{ wait_for_silence: 'TIMEOUT' }] } });
        expect(t.violations).toEqual([]);
        expect(t.commands.map((c) => [c.command, c.spellings, c.params, c.result, c.duration_ms])).toEqual([
          ['wait', ['seconds (older spelling of wait)'], { seconds: 3 }, '0', 3000],
          ['send_dtmf', ['digit (older spelling of digits)'], { digit: '12#' }, '0', 600],
          [
            'wait_for_silence',
            ['timeout_ms (older spelling of timeout, in ms)'],
            { silence_ms: 500, timeout_ms: 9000 },
            'TIMEOUT',
            9000,
          ],
          ['hangup', undefined, {}, '', 0],
        ]);
        expect(t.warnings.map((w) => `${w.request} ${w.code} ${w.field}`)).toEqual([
          '1 OLD_SPELLING params.seconds',
          '2 OLD_SPELLING params.digit',
          '3 OLD_SPELLING params.timeout_ms',
        ]);
      } finally {
        await s.close();
      }
    },
  );

  it('a terminal request answered with an error is only a warning (the service ignores that reply)', async () => {
    const s = await fakeServer((_r, n) => (n === 1 ? { body: cmd('hangup', 1) } : { status: 500, body: 'x' }));
    try {
      const t = await e.call({ url: s.url });
      expect(t.violations).toEqual([]);
      expect(t.warnings).toEqual([
        { request: 2, code: 'TERMINAL_REPLY', field: 'status', message: expect.stringMatching(/HTTP 500 \(ignored/) },
      ]);
      expect(t.final?.http_status).toBe(500);
    } finally {
      await s.close();
    }
  });
});
