/**
 * The real-time driver against a scripted fake customer server: the wire format of the
 * requests, the caller script's actions, the simulated commands, and the ways a call ends.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ids } from '../../src/emulator/ids.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import { cmd, fakeServer, startEmulator, type Running } from './helpers.js';

const TTS = (t: string) => `TTS|TTS_EN-GB_SERENA|${t}`;
/** A seed whose first call's callid is above 2^53 (the call's id is drawn first). */
const BIG_SEED = (() => {
  for (let i = 0; ; i++) {
    const ids = new Ids(`big${i}`);
    ids.hash();
    if (BigInt(ids.callid()) > 2n ** 53n) return `big${i}`;
  }
})();

let e: Running;
beforeAll(async () => {
  e = await startEmulator({ seed: BIG_SEED });
});
afterAll(async () => e.close());

type Srv = Awaited<ReturnType<typeof fakeServer>>;
const servers: Srv[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
/** A server answering `replies` in turn (then hangup), numbering command_ids 1, 2, ... */
async function script(...replies: [string, object?][]): Promise<Srv> {
  const s = await fakeServer((_r, n) => {
    const [c, p] = replies[n - 1] ?? ['hangup', {}];
    return { body: cmd(c, n, p ?? {}) };
  });
  servers.push(s);
  return s;
}
const wire = (s: Srv) =>
  s.seen.map((x) => [
    x.json.call_status,
    x.json.command,
    x.json.command_id,
    x.json.command_result,
    x.json.command_error,
  ]);
const results = (t: Transcript) =>
  t.commands.map((c) => [c.command, c.error ? `error:${c.error}` : c.result, c.status]);

describe('requests on the wire', () => {
  it(
    'the first request: all 14 fields in order, callid a bare integer digit for digit (above 2^53 here), ' +
      'command "" / 0, variables {}',
    async () => {
      const s = await script();
      const t = await e.call({
        url: s.url,
        caller: {
          call: {
            from: '+447700900111',
            name: 'Ada',
            to: '+442079460001',
            date: '2026-11-23 09:30:00',
            cdr_field: 'abc123',
            app: 'ROUTEAPP',
          },
        },
      });
      expect(BigInt(t.callid) > 2n ** 53n).toBe(true);
      const first = s.seen[0]!;
      expect(first.body).toBe(
        `{"app":"ROUTEAPP","callid":${t.callid},"request_hash":null,"cli_name":"Ada","cli_number":"+447700900111",` +
          `"date_started":"2026-11-23 09:30:00","number":"+442079460001",` +
          `"command":"","command_id":0,"command_result":"","command_error":"","call_status":"UP",` +
          `"cdr_field":"abc123","variables":{}}`,
      );
      expect(first.headers['content-type']).toBe('application/json');
      expect(first.headers.expect).toBeUndefined();
      expect(first.headers.authorization).toBeUndefined();
      expect(s.seen[1]!.body).toContain(`"callid":${t.callid},`);
    },
  );

  it(
    'echoes the reply variables and command_id digit for ' + 'digit, big numbers included; Basic auth when given',
    async () => {
      const s = await fakeServer((_r, n) =>
        n === 1
          ? {
              body:
                '{"command":"wait","command_id":9007199254740993,"params":{"wait":1},' +
                '"variables":{"n":123456789012345678901,"s":"x"}}',
            }
          : { body: cmd('hangup', 1) },
      );
      servers.push(s);
      const t = await e.call({ url: s.url, auth: { login: 'svc', password: 'p:w' } });
      expect(s.seen[1]!.body).toContain('"command":"wait","command_id":9007199254740993,"command_result":"0"');
      expect(s.seen[1]!.body).toContain('"variables":{"n":123456789012345678901,"s":"x"}');
      expect(s.seen[0]!.headers.authorization).toBe('Basic ' + Buffer.from('svc:p:w').toString('base64'));
      expect(t.commands[0]!.command_id).toBe('9007199254740993');
    },
  );

  it(
    'call.status INCOMING_CALL for the first request, UP ' + 'afterwards; call.variables on the first request',
    async () => {
      const s = await script(['wait', { wait: 1 }]);
      await e.call({ url: s.url, caller: { call: { status: 'INCOMING_CALL', variables: { k: 1 } } } });
      expect(s.seen.map((x) => x.json.call_status)).toEqual(['INCOMING_CALL', 'UP', 'HANGUP']);
      expect(s.seen[0]!.json.variables).toEqual({ k: 1 });
      expect(s.seen[1]!.json.variables).toEqual({});
    },
  );
});

describe('how a call ends', () => {
  it('the server answers hangup: one final HANGUP request carrying hangup and its command_id, no result', async () => {
    const s = await script(['play', { media_id: '12' }]);
    const t = await e.call({ url: s.url });
    expect(wire(s)).toEqual([
      ['UP', '', 0, '', ''],
      ['UP', 'play', 1, '0', ''],
      ['HANGUP', 'hangup', 2, '', ''],
    ]);
    expect(t).toMatchObject({
      status: 'ended',
      ended_by: 'flow',
      requests: 3,
      final: { request: 3, call_status: 'HANGUP', command: 'hangup', command_id: 2, http_status: 200 },
    });
  });

  it('the caller hangs up during a command: HANGUP carries it, with no result', async () => {
    const s = await script(['play', { media_id: '1' }], ['read', { media_id: '2', max_digits: 1 }]);
    const t = await e.call({ url: s.url, caller: { actions: ['hangup'] } });
    expect(wire(s)).toEqual([
      ['UP', '', 0, '', ''],
      ['HANGUP', 'play', 1, '', ''],
    ]);
    expect(t.commands[0]).toMatchObject({ status: 'interrupted', caller: 'hung up' });
    expect(t.ended_by).toBe('caller');
    expect(t.end_reason).toMatch(/the caller hung up during play \(caller:\d+:\d+\)/);
  });

  it(
    'hangup: read skips other commands; a recording ' + 'interrupted by a hang-up is kept (its file is the result)',
    async () => {
      const s = await script(
        ['play', { media_id: '1' }],
        ['read', { media_id: '2' }],
        ['record', { max_duration: 60 }],
      );
      const t = await e.call({ url: s.url, caller: { actions: [{ hangup: 'record' }] } });
      expect(results(t)).toEqual([
        ['play', '0', 'done'],
        ['read', '1', 'done'],
        ['record', expect.stringMatching(/^rec-\d+-[0-9a-f]{8}\.wav$/), 'interrupted'],
      ]);
      expect(wire(s).at(-1)).toEqual(['HANGUP', 'record', 3, t.commands[2]!.result, '']);
    },
  );

  it('hangup_after: the command completes, the caller hangs up during the next one', async () => {
    const s = await script(['record', {}], ['wait', { wait: 1 }], ['play', { media_id: '3' }]);
    const t = await e.call({ url: s.url, caller: { actions: [{ hangup_after: 'record' }] } });
    expect(results(t)).toEqual([
      ['record', expect.stringMatching(/^rec-/), 'done'],
      ['wait', '', 'interrupted'],
    ]);
    expect(wire(s).map((w) => w.slice(0, 3))).toEqual([
      ['UP', '', 0],
      ['UP', 'record', 1],
      ['HANGUP', 'wait', 2],
    ]);
  });

  it('call.hangup_at: the command running at that time is interrupted', async () => {
    const s = await script(['wait', { wait: 4 }], ['wait', { wait: 10 }], ['wait', { wait: 1 }]);
    const t = await e.call({ url: s.url, caller: { call: { hangup_at: 9 } } });
    expect(t.commands.map((c) => [c.at_ms, c.duration_ms, c.status])).toEqual([
      [0, 4000, 'done'],
      [4000, 5000, 'interrupted'],
    ]);
    expect(t.duration_ms).toBe(9000);
    expect(t.end_reason).toBe('the caller hung up at 9 s (call.hangup_at)');
  });

  it('a dialout answered: bridged, and the next request is terminal (HANGUP carrying dialout)', async () => {
    const targets = [
      { number: '+442079460100', timeout: 20 },
      { number: '+442079460101', timeout: 15 },
    ];
    const s = await script(['dialout', { targets, ringtone: 'RING' }]);
    const t = await e.call({
      url: s.url,
      caller: { actions: [{ dialout: { answer: 2, ring: 3, talk: 40, hangup_by: 'caller' } }] },
    });
    expect(t.commands[0]).toMatchObject({
      result: '',
      duration_ms: (20 + 3 + 40) * 1000,
      caller: '+442079460100 did not answer (20 s); +442079460101 answered after 3 s; bridged 40 s; the caller hung up',
    });
    expect(wire(s)).toEqual([
      ['UP', '', 0, '', ''],
      ['HANGUP', 'dialout', 1, '', ''],
    ]);
    expect(t.ended_by).toBe('bridge');
  });

  it('the emulator hangs up a call that loops past max_commands', async () => {
    const s = await fakeServer((_r, n) => ({ body: cmd('wait', n, { wait: 1 }) }));
    servers.push(s);
    const t = await e.call({ url: s.url, caller: { call: { max_commands: 5 } } });
    expect(t.commands).toHaveLength(5);
    expect(t.ended_by).toBe('emulator');
    expect(t.warnings).toEqual([
      expect.objectContaining({ code: 'MAX_COMMANDS', message: expect.stringMatching(/5 commands/) }),
    ]);
    expect(wire(s).at(-1)).toEqual(['HANGUP', 'wait', 5, '0', '']);
  });

  it(
    'hangup_callid ends another live call at once (real time); the HANGUP of that call carries its interrupted ' +
      'command',
    async () => {
      const a = await fakeServer(() => ({ body: cmd('wait', 1, { wait: 30 }) }));
      servers.push(a);
      const started = await e.req('/emulator/calls', { body: { url: a.url, realtime: true, wait: false } });
      expect(started.status).toBe(202);
      const { id, callid } = started.json;
      while (a.seen.length < 1) await new Promise((r) => setTimeout(r, 10));
      const b = await fakeServer((_r, n) => ({
        body:
          n === 1
            ? `{"command":"hangup_callid","command_id":1,"params":{"callid":${callid}},"variables":{}}`
            : cmd('hangup', 2),
      }));
      servers.push(b);
      const tb = await e.call({ url: b.url });
      expect(tb.commands[0]).toMatchObject({
        command: 'hangup_callid',
        result: '',
        caller: `call ${callid} (${id}) was hung up`,
      });
      await Promise.allSettled([...e.emu.ctx.background]);
      const ta = (await e.req(`/emulator/calls/${id}`)).json as Transcript;
      expect(ta).toMatchObject({ ended_by: 'hangup_callid', status: 'ended' });
      expect(ta.commands[0]).toMatchObject({ command: 'wait', status: 'interrupted' });
      expect(ta.commands[0]!.duration_ms).toBeLessThan(5000);
      expect(a.seen.map((x) => [x.json.call_status, x.json.command])).toEqual([
        ['UP', ''],
        ['HANGUP', 'wait'],
      ]);
      // an unknown callid, and this call's own callid
      const c = await fakeServer((_r, n) => ({ body: n === 1 ? cmd('hangup_callid', 1, {}) : cmd('hangup', 2) }));
      servers.push(c);
      const tc = await e.call({ url: c.url });
      expect(tc.violations[0]).toMatchObject({ code: 'MISSING_PARAM', field: 'params.callid' });
    },
  );
});

describe('the caller script', () => {
  it('read: keys end at # or max_digits; fewer keys and no # is TIMEOUT; extra keys are ignored', async () => {
    const read = (max: number) => ['read', { media_id: '9', max_digits: max, timeout_ms: 3000 }] as [string, object];
    const s = await script(read(4), read(2), read(4), read(1), read(3));
    const t = await e.call({
      url: s.url,
      caller: { actions: [{ read: '12#' }, { read: '1234' }, { read: '12' }, { read: 'TIMEOUT' }, { read: '#' }] },
    });
    expect(t.commands.slice(0, 5).map((c) => [c.result, c.caller])).toEqual([
      ['12', 'pressed 12#'],
      ['12', 'pressed 1234 (34 after the end of input ignored)'],
      ['TIMEOUT', 'pressed 12 (2 of 4 keys and no #): TIMEOUT'],
      ['TIMEOUT', 'answered TIMEOUT (as scripted)'],
      ['TIMEOUT', 'pressed # (only #): TIMEOUT'],
    ]);
  });

  it(
    'actions are matched in order: the head action applies to ' + 'a command it names, others take their defaults',
    async () => {
      const s = await script(
        ['play', { media_id: '1' }],
        ['read', { media_id: '2' }],
        ['play', { media_id: '3' }],
        ['read', { media_id: '4' }],
        ['play', { media_id: '5' }],
      );
      const t = await e.call({
        url: s.url,
        caller: { actions: [{ read: '7' }, { play: '1' }, { read: '8' }, { read: '9' }], defaults: { play: 'failed' } },
      });
      expect(results(t)).toEqual([
        ['play', '1', 'done'], // defaults: failed
        ['read', '7', 'done'],
        ['play', '1', 'done'], // action
        ['read', '8', 'done'],
        ['play', '1', 'done'],
        ['hangup', '', 'done'],
      ]);
      expect(t.unused_actions).toEqual([expect.stringMatching(/^read: "9" \(caller:\d+:\d+\)$/)]);
    },
  );

  it('error: the next command fails with command_error and no result', async () => {
    const s = await script(['play', { media_id: '1' }], ['record', {}]);
    const t = await e.call({
      url: s.url,
      caller: { actions: [{ error: 'MEDIA_NOT_FOUND' }, { record: { error: 'RECORD_FAILED' } }] },
    });
    expect(wire(s).slice(1, 3)).toEqual([
      ['UP', 'play', 1, '', 'MEDIA_NOT_FOUND'],
      ['UP', 'record', 2, '', 'RECORD_FAILED'],
    ]);
    expect(t.commands[0]!.caller).toBe('failed with MEDIA_NOT_FOUND (as scripted)');
  });

  it('the default caller: first success outcome, 1 at every read', async () => {
    const s = await script(
      ['play_talk_detect', { media_id: TTS('Hello there') }],
      ['read', { media_id: '1', max_digits: 3 }],
      ['wait_for_silence', { silence_ms: 800 }],
      ['conference', { id: 'room1', pin_code: '2468' }],
      ['simple_conference', { id: 'r2' }],
      ['start_call_recording', {}],
      ['stop_call_recording', { announce: '0' }],
      ['send_dtmf', { digits: '12' }],
      ['dialout', { targets: [{ number: '+442079460100', timeout: 20 }] }],
    );
    const t = await e.call({ url: s.url });
    expect(t.caller).toBe('default caller');
    const hash = t.commands[5]!.result;
    expect(hash).toMatch(/^[A-Z0-9]{8}$/);
    expect(t.commands.map((c) => [c.command, c.result])).toEqual([
      ['play_talk_detect', '0'],
      ['read', 'TIMEOUT'], // "1" is 1 of 3 keys and no #
      ['wait_for_silence', 'SILENCE'],
      ['conference', 'CONFERENCE_CLOSED'],
      ['simple_conference', ''],
      ['start_call_recording', hash],
      ['stop_call_recording', hash],
      ['send_dtmf', '0'],
      ['dialout', ''],
    ]);
    expect(t.commands[3]!.caller).toBe('typed PIN 2468 (right); in the room 60 s, the room was closed');
    expect(t.ended_by).toBe('bridge');
  });

  it(
    'conference PINs: wrong ones up to pin_max_tries (PIN_ERROR), nothing typed (PIN_TIMEOUT), the right one ' +
      'after a wrong one',
    async () => {
      const conf = ['conference', { id: 'room', pin_code: '2468', pin_max_tries: 2 }] as [string, object];
      const s = await script(conf, conf, conf, conf);
      const t = await e.call({
        url: s.url,
        caller: {
          actions: [
            { conference: { pins: ['1111'] } },
            { conference: { pin: '' } },
            { conference: { pins: ['1', '2468'], result: 'LEFT_CONFERENCE' } },
            { conference: 'LAST_PARTICIPANT' },
          ],
        },
      });
      expect(t.commands.slice(0, 4).map((c) => [c.result, c.caller])).toEqual([
        ['PIN_ERROR', 'typed PIN 1111 (wrong), 1111 (wrong); not let in: PIN_ERROR'],
        ['PIN_TIMEOUT', 'typed PIN nothing; not let in: PIN_TIMEOUT'],
        ['LEFT_CONFERENCE', 'typed PIN 1 (wrong), 2468 (right); in the room 60 s, left with *'],
        ['LAST_PARTICIPANT', 'typed PIN 2468 (right); in the room 60 s, left as the last participant'],
      ]);
    },
  );

  it(
    "recordings: play_record of this call's recording plays, " + 'an unknown file fails; stop without start fails',
    async () => {
      const s = await fakeServer((r, n) => {
        if (n === 1) return { body: cmd('record', 1, { max_duration: 10, silence: 2 }) };
        if (n === 2) return { body: cmd('play_record', 2, { media_file: r.json.command_result }) };
        if (n === 3) return { body: cmd('play_record', 3, { media_file: 'other.wav' }) };
        if (n === 4) return { body: cmd('stop_call_recording', 4, {}) };
        return { body: cmd('hangup', 5) };
      });
      servers.push(s);
      const t = await e.call({ url: s.url, caller: { actions: [{ record: 12 }] } });
      expect(t.commands.slice(0, 4).map((c) => [c.command, c.result, c.error, c.duration_ms, c.caller])).toEqual([
        ['record', expect.stringMatching(/^rec-/), '', 10000, 'spoke 12 s: stopped at max_duration (10 s)'],
        ['play_record', '0', '', 10000, 'listened to the recording (10 s)'],
        ['play_record', '1', '', 200, 'no recording other.wav on this call: result 1 (error)'],
        [
          'stop_call_recording',
          '',
          'NO_ACTIVE_RECORDING',
          0,
          'no call recording was started: command_error NO_ACTIVE_RECORDING',
        ],
      ]);
    },
  );

  it('play_wav_data: an 8 kHz 16-bit mono WAV plays; another format is result 1', async () => {
    const beep = /play_wav_data: "([^"]+)"/.exec(
      readFileSync(new URL('../../flows/support-line.yaml', import.meta.url), 'utf8'),
    )![1]!;
    const wav = Buffer.from(beep, 'base64');
    wav.writeUInt32LE(44100, 24);
    const s = await script(
      ['play_wav_data', { audio_data: beep }],
      ['play_wav_data', { audio_data: wav.toString('base64') }],
      ['play_wav_data', { audio_data: 'aGVsbG8gd29ybGQ=' }],
    );
    const t = await e.call({ url: s.url });
    expect(t.commands.slice(0, 3).map((c) => [c.result, c.caller])).toEqual([
      ['0', 'listened (0.1 s of audio)'],
      ['1', 'the WAV is 44100 Hz; it must be PCM 8000 Hz, 16-bit, mono: result 1 (error)'],
      ['1', 'not a WAV file (no RIFF/WAVE header): result 1 (error)'],
    ]);
  });

  it('dialout outcomes the dialout makes impossible are warnings: nobody answers', async () => {
    const s = await script(
      ['dialout', { targets: [{ number: '+442079460100', timeout: 10 }] }],
      ['dialout', { targets: [{ number: '+442079460100', timeout: 10 }] }],
    );
    const t = await e.call({ url: s.url, caller: { actions: [{ dialout: '+442079469999' }, { dialout: 3 }] } });
    expect(t.commands.slice(0, 2).map((c) => c.result)).toEqual(['NOANSWER', 'NOANSWER']);
    expect(t.warnings.map((w) => w.message)).toEqual([
      'the script has +442079469999 answer, which is not a target of this dialout (+442079460100): nobody answers',
      'the script has target 3 answer; this dialout has 1: nobody answers',
    ]);
  });

  it('play_talk_detect TALK, wait_for_silence TIMEOUT, simulated durations add up', async () => {
    const s = await script(
      ['play_talk_detect', { media_id: TTS('one two three four five six seven'), min_ms: 300, silence_ms: 800 }],
      ['wait_for_silence', { silence_ms: 1500, iterations: 3, timeout: 30 }],
      ['wait', { wait: 2 }],
    );
    const t = await e.call({
      url: s.url,
      caller: { actions: [{ play_talk_detect: 'TALK' }, { wait_for_silence: 'TIMEOUT' }] },
    });
    expect(t.commands.map((c) => [c.result, c.at_ms, c.duration_ms])).toEqual([
      ['TALK', 0, 1000 + 500 + 800],
      ['TIMEOUT', 2300, 30000],
      ['0', 32300, 2000],
      ['', 34300, 0],
    ]);
  });
});

describe('placing calls', () => {
  it(
    'an inbound call to a DID routed to an app: the app ' + 'URL, its credentials, its hash; the DID as number',
    async () => {
      const s = await script(['wait', { wait: 1 }]);
      const app = (await e.rpc('apps.create', ['REALTIME10', 'desk', { url: s.url, login: 'rt', password: 'pw' }]))
        .result;
      expect((await e.req('/emulator/dids/+442079460999', { method: 'PUT', body: { app: app.hash } })).json).toEqual({
        number: '+442079460999',
        app: app.hash,
      });
      expect((await e.req('/emulator/dids')).json).toMatchObject({ '+442079460999': app.hash });
      const t = await e.call({ did: '+442079460999' });
      expect(s.seen[0]!.json).toMatchObject({ app: app.hash, number: '+442079460999', request_hash: null });
      expect(s.seen[0]!.headers.authorization).toBe('Basic ' + Buffer.from('rt:pw').toString('base64'));
      expect(t).toMatchObject({ direction: 'inbound', app: app.hash, to: '+442079460999', url: s.url });
      const byApp = await e.call({ app: app.hash, caller: { call: { to: '+442079460998' } } });
      expect(byApp.to).toBe('+442079460998');
      expect((await e.req('/emulator/dids/+442079460999', { method: 'DELETE' })).status).toBe(204);
      expect((await e.req('/emulator/dids/+442079460999', { method: 'DELETE' })).status).toBe(404);
    },
  );

  it(
    'an outbound call through a URL: request_hash is the call ' + 'id, number the number called, cli_number the cli',
    async () => {
      const s = await script(['wait', { wait: 1 }]);
      const t = await e.call({ url: s.url, outbound: '+447700900222', cli: 'BLOCKED', cdr_field: 'appt1' });
      expect(s.seen[0]!.json).toMatchObject({
        request_hash: t.id,
        number: '+447700900222',
        cli_number: '',
        cdr_field: 'appt1',
        call_status: 'UP',
      });
      expect(t.direction).toBe('outbound');
    },
  );

  it.each(['BUSY', 'CONGESTION', 'REJECTED'])(
    'an outbound call that fails (%s): one terminal request with that status',
    async (answer) => {
      const s = await script();
      const t = await e.call({ url: s.url, outbound: '+447700900222', ring_timeout: 12, caller: { call: { answer } } });
      expect(wire(s)).toEqual([[answer, '', 0, '', '']]);
      expect(t).toMatchObject({ ended_by: 'not_answered', duration_ms: 12000, requests: 1 });
    },
  );

  it('transcripts are listed newest first and read by id', async () => {
    const list = (await e.req('/emulator/calls')).json;
    expect(list.length).toBeGreaterThan(3);
    const one = (await e.req(`/emulator/calls/${list[0].id}`)).json;
    expect(one.id).toBe(list[0].id);
    expect(Object.keys(list[0])).toEqual([
      'id',
      'callid',
      'direction',
      'url',
      'caller',
      'date_started',
      'status',
      'ended_by',
      'commands',
      'violations',
    ]);
    expect((await e.req('/emulator/calls/NOPE0000')).status).toBe(404);
  });
});

describe('real time', () => {
  it("--realtime waits each command's simulated duration (the sleep is injected here)", async () => {
    const slept: number[] = [];
    const r = await startEmulator({ realtime: true, sleep: async (ms) => void slept.push(ms) });
    try {
      const s = await script(['wait', { wait: 3 }], ['play', { media_id: '7' }]);
      await r.call({ url: s.url });
      expect(slept).toEqual([3000, 3000]);
      slept.length = 0;
      await r.call({ url: s.url, realtime: false });
      expect(slept).toEqual([]);
    } finally {
      await r.close();
    }
  });
});
