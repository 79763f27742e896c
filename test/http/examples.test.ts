/**
 * Whole calls through `fastify.inject` for every example flow of flows/, as the telephony
 * service makes them: each request is answered with the exact command, command_id and
 * params the flow says (templates resolved), each call ends with a terminal request whose
 * hangup handler is checked through the `call ended` log line, and the call is forgotten.
 * The plugin is registered with a fake SMS account (`effects.sms`) that records every
 * message, so that the SMS the flows send (voicemail) are checked exactly too.
 *
 * Steps reached, per flow (every step of every flow):
 * - front-desk: route, welcome, welcome_fr, menu, sales, accounts, info, count_visit,
 *   again, no_choice, operator, operator_busy, closed, technical_problem, goodbye, end,
 *   log_call.
 * - voicemail: greeting, tone, count_take, record_message, pause, review_intro, playback,
 *   keep_or_redo, can_redo, redo, last_take, kept, confirm_by_sms, send_confirmation,
 *   goodbye, end, file_message, notify_owner, text_owner, filed.
 * - support-line: welcome, priority, triage, outage_check, phone_help, line_test_intro,
 *   line_test, line_test_result, extension, direct, priority_desk, engineers,
 *   leave_message, beep, record_problem, thanks, no_topic, supervisor, supervisor_pin,
 *   stuck_call, take_stuck_callid, confirm_stuck_call, end_stuck_call, stuck_call_ended,
 *   stuck_call_goodbye, failure, end, log_call.
 * - conference: welcome, choose_room, help, meeting_number, find_meeting, unknown_meeting,
 *   meeting_found, meeting_room, after_leaving, open_room, open_room_bridge,
 *   technical_problem, goodbye, end, log_call.
 * - reminder: check_extension, switchboard_pause, dial_extension, extension_ring, opening,
 *   machine, machine_message, left_on_machine, confirm, confirmed, thank_confirmed,
 *   cancelled, thank_cancelled, reception, end, record_outcome, not_reached, reached.
 * - recording-consent: welcome, ask_consent, no_consent, start_recording, mark_recorded,
 *   terms, agree, stop_recording, decide, outcome, renewed, declined, advisor,
 *   advisor_busy, stop_silently, call_back, problem, end, file_call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { EffectError, type SmsMessage } from '../../src/http/effects.js';
import { callscript } from '../../src/http/plugin.js';
import { MemoryStore } from '../../src/store/memory.js';
import { DANIEL, startCall, tts } from '../helpers/call.js';

const FLOWS = new URL('../../flows', import.meta.url).pathname;

interface LogLine {
  msg: string;
  callid?: string;
  flow?: string;
  version?: string;
  status?: string;
  commands?: number;
  durationMs?: number;
  lastStep?: string;
  vars?: Record<string, unknown>;
  [k: string]: unknown;
}

/** One SMS the fake account was asked to send, and the time it was given. */
interface SentSms {
  msg: SmsMessage;
  timeoutMs: number;
}

interface ServeOptions {
  /** Default: flows/. */
  flowsDir?: string;
  /**
   * The fake SMS account: answers the SMS hash, or throws (an EffectError). Default: the
   * hashes SMS00001, SMS00002, ... in turn. null: no SMS account (no `effects.sms`).
   */
  sms?: ((msg: SmsMessage) => string) | null;
}

interface Served {
  app: FastifyInstance;
  /** Every SMS the flows asked the fake account to send, in order (failed ones too). */
  sms: SentSms[];
  /** The `call ended` log lines so far. */
  ended(): LogLine[];
  /** The warning log lines so far. */
  warnings(): LogLine[];
  /** GET /health `calls`. */
  liveCalls(): Promise<number>;
  /** The loaded version of a flow. */
  version(flow: string): Promise<string>;
}

let current: FastifyInstance | undefined;

afterEach(async () => {
  await current?.close();
  current = undefined;
});

/**
 * The callscript plugin on our own Fastify, its pino logger writing to memory, with a
 * fake SMS account that records what it is asked to send.
 */
async function serve(opts: ServeOptions = {}): Promise<Served> {
  const lines: string[] = [];
  const sms: SentSms[] = [];
  const answer = opts.sms === undefined ? () => `SMS${String(sms.length).padStart(5, '0')}` : opts.sms;
  const effects =
    answer === null
      ? {}
      : { sms: async (msg: SmsMessage, timeoutMs: number) => (sms.push({ msg, timeoutMs }), answer(msg)) };
  const app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
  await app.register(callscript, { flowsDir: opts.flowsDir ?? FLOWS, store: new MemoryStore(), effects });
  await app.ready();
  current = app;
  const health = async () => (await app.inject({ method: 'GET', url: '/health' })).json();
  const logged = () => lines.map((l) => JSON.parse(l) as LogLine);
  return {
    app,
    sms,
    ended: () => logged().filter((l) => l.msg === 'call ended'),
    // pino writes the numeric level first; read it from the text, as the engine's log
    // entries also carry a `level` field of their own ("warn") that comes later in the line
    warnings: () => lines.filter((l) => l.startsWith('{"level":40,')).map((l) => JSON.parse(l) as LogLine),
    liveCalls: async () => (await health()).calls,
    version: async (flow) => (await health()).flows.find((f: { name: string }) => f.name === flow).version,
  };
}

/** Checks the one `call ended` line of a callid: flow, version, status, commands, last step, vars. */
async function expectEnded(
  s: Served,
  callid: string,
  flow: string,
  want: { status: string; commands: number; lastStep: string; vars: Record<string, unknown> },
) {
  const lines = s.ended().filter((l) => l.callid === callid);
  expect(lines).toHaveLength(1);
  const { msg, level, durationMs, ...line } = lines[0]!;
  expect({ msg, level }).toEqual({ msg: 'call ended', level: 30 }); // info
  expect(durationMs).toBeGreaterThanOrEqual(0);
  const fields = {
    callid: line.callid,
    flow: line.flow,
    version: line.version,
    status: line.status,
    commands: line.commands,
    lastStep: line.lastStep,
    vars: line.vars,
  };
  expect(fields).toEqual({ callid, flow, version: await s.version(flow), ...want });
}

// ============================================================================================
describe('front-desk', () => {
  const URL_ = '/rt/front-desk';
  const VARS = { company: 'Acme', office_open: true, menu_visits: 0 };
  const MENU = { max_digits: 1, timeout_ms: 6000, attempts: 1 };
  const PROMPT = [
    'For sales, press 1. For accounts, press 2. To hear our address and opening hours, press 3. To speak to ' +
      'the operator, press 0 at any time.',
    'Sorry, I did not hear a choice. Press 1 for sales, 2 for accounts, 3 for our address and opening hours, ' +
      'or 0 for the operator.',
    'Please press 1, 2, 3, or 0 now.',
  ];
  const menu = (n: number) => ({ media_id: tts(PROMPT[n]!), ...MENU });
  const WELCOME = tts('Thank you for calling Acme.');
  const INFO = tts(
    'Acme is at 12 Example Street, London. We are open every day from 8 in the morning until 6 in the evening, UTC.',
  );
  const GOODBYE = tts('Thank you for calling. Goodbye.');
  const OPERATOR = (choice: string) => ({
    targets: [
      { number: '+442079460100', timeout: 20 },
      { number: '+442079460101', timeout: 20 },
    ],
    ringtone: 'RING',
    whisper: tts(`Front desk call. The caller chose ${choice}.`),
    cdr_field: 'operator',
  });
  const OPERATOR_BUSY = tts(
    'Sorry, nobody is available to take your call. Please call again later, or send an email to hello at ' +
      'acme dot co dot uk.',
  );
  const UK = { cli_number: '+447700900123', number: '+442079460000', date_started: '2026-11-20 09:15:00' };

  it(
    'a UK caller hears the address three times, then ' + 'goodbye; a retried request mid-call changes nothing',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '1001', ...UK });
      (await call.start()).expect('play', { media_id: WELCOME });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('3')).expect('play', { media_id: INFO });
      // count_visit (1), again: back to the menu, a new visit: the first prompt again
      (await call.answer('0')).expect('read', menu(0));
      await call.retry(); // the service did not get the reply: same bytes, no advance
      await call.retry();
      (await call.answer('3')).expect('play', { media_id: INFO });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('3')).expect('play', { media_id: INFO });
      // menu_visits is 3: again -> goodbye
      (await call.answer('0')).expect('play', { media_id: GOODBYE });
      (await call.answer('0')).expect('hangup', {});
      expect(await s.liveCalls()).toBe(1);
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '1001', 'front-desk', {
        status: 'HANGUP',
        commands: 9,
        lastStep: 'end',
        vars: {
          ...VARS,
          menu_visits: 3,
          choice: '3',
          outcome: '3',
          summary: 'front-desk call 1001 from +447700900123 ended (hangup) after choice 3',
        },
      });
    },
  );

  it(
    'a French caller: French welcome, TIMEOUT and no-match retries with say, sales NOANSWER, operator ' +
      'NOANSWER, then hangs up (HANGUP mid-call)',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, {
        callid: '1002',
        cli_number: '+33612345678',
        number: '+442079460000',
        date_started: '2026-11-20 10:00:00',
      });
      (await call.start()).expect('play', {
        media_id: tts("Bonjour et merci d'appeler Acme. La suite de l'appel est en anglais.", 'TTS_FR-FR_AUDREY'),
      });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('TIMEOUT')).expect('read', menu(1));
      (await call.answer('7')).expect('play', { media_id: tts('Sorry, 7 is not one of the choices.') });
      (await call.answer('0')).expect('read', menu(2));
      (await call.answer('1')).expect('dialout', {
        targets: [{ number: '+442079460110', timeout: 25 }],
        ringtone: 'MUSIC',
        whisper: tts('Sales call from +33612345678.'),
        cdr_field: 'sales',
      });
      (await call.answer('NOANSWER')).expect('play', { media_id: tts('Our sales team is busy at the moment.') });
      (await call.answer('0')).expect('dialout', OPERATOR('1'));
      (await call.answer('NOANSWER')).expect('play', { media_id: OPERATOR_BUSY });
      await call.end('HANGUP'); // the caller hangs up during the message
      expect(await s.liveCalls()).toBe(0);
      await call.retry(); // the terminal request again: the same hangup, the handler does not run twice
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '1002', 'front-desk', {
        status: 'HANGUP',
        commands: 9,
        lastStep: 'operator_busy',
        vars: {
          ...VARS,
          choice: '1',
          outcome: '1',
          summary: 'front-desk call 1002 from +33612345678 ended (hangup) after choice 1',
        },
      });
    },
  );

  it(
    'accounts NOANSWER, then the operator dialout fails: handlers.error plays the technical problem and hangs ' + 'up',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '1003', ...UK });
      (await call.start()).expect('play', { media_id: WELCOME });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('2')).expect('dialout', {
        targets: [{ number: '+442079460120', timeout: 25 }],
        ringtone: 'MUSIC',
        cdr_field: 'accounts',
      });
      (await call.answer('NOANSWER')).expect('play', { media_id: tts('Our accounts team is busy at the moment.') });
      (await call.answer('0')).expect('dialout', OPERATOR('2'));
      (await call.fail('DIALOUT_FAILED')).expect('play', {
        media_id: tts('We are sorry, we are having technical problems. Please call again later.'),
      });
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '1003', 'front-desk', {
        status: 'HANGUP',
        commands: 7,
        lastStep: 'end',
        vars: {
          ...VARS,
          choice: '2',
          outcome: '2',
          summary: 'front-desk call 1003 from +447700900123 ended (hangup) after choice 2',
        },
      });
    },
  );

  it(
    '"0" in the menu reaches the operator from any prompt ' + '(handlers.on.read); operator NOANSWER, goodbye',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '1004', ...UK });
      (await call.start()).expect('play', { media_id: WELCOME });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('TIMEOUT')).expect('read', menu(1));
      (await call.answer('TIMEOUT')).expect('read', menu(2));
      (await call.answer('0')).expect('dialout', OPERATOR('0'));
      (await call.answer('NOANSWER')).expect('play', { media_id: OPERATOR_BUSY });
      (await call.answer('0')).expect('play', { media_id: GOODBYE });
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      // ended calls stay ended (a tombstone): a late first request for the callid gets hangup, not the welcome
      const again = startCall(s.app, URL_, { callid: '1004', ...UK });
      (await again.start()).expect('hangup', {});
    },
  );

  // The menu saves every result in vars.choice, TIMEOUT included: once its retries are
  // used up, no_choice sets it to "nothing", so the operator never hears "The caller chose
  // TIMEOUT." and the log never says "after choice TIMEOUT".
  it(
    'a caller who presses nothing reaches the operator, whispered as having chosen nothing; the operator ' + 'answers',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '1007', ...UK });
      (await call.start()).expect('play', { media_id: WELCOME });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('TIMEOUT')).expect('read', menu(1));
      (await call.answer('TIMEOUT')).expect('read', menu(2));
      (await call.answer('TIMEOUT')).expect('dialout', OPERATOR('nothing'));
      await call.end('HANGUP'); // bridged to the operator: the call ends with the bridge
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '1007', 'front-desk', {
        status: 'HANGUP',
        commands: 5,
        lastStep: 'operator',
        vars: {
          ...VARS,
          choice: 'nothing',
          outcome: 'nothing',
          summary: 'front-desk call 1007 from +447700900123 ended (hangup) after choice nothing',
        },
      });
    },
  );

  it(
    'a caller who presses only wrong keys reaches the operator ' + 'as having chosen nothing, not the last wrong key',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '1008', ...UK });
      (await call.start()).expect('play', { media_id: WELCOME });
      (await call.answer('0')).expect('read', menu(0));
      (await call.answer('7')).expect('play', { media_id: tts('Sorry, 7 is not one of the choices.') });
      (await call.answer('0')).expect('read', menu(1));
      (await call.answer('*')).expect('play', { media_id: tts('Sorry, * is not one of the choices.') });
      (await call.answer('0')).expect('read', menu(2));
      // default's 2 retries are used: its say, then no_choice and the operator
      (await call.answer('9')).expect('play', { media_id: tts('Sorry, 9 is not one of the choices.') });
      (await call.answer('0')).expect('dialout', OPERATOR('nothing'));
      (await call.answer('NOANSWER')).expect('play', { media_id: OPERATOR_BUSY });
      (await call.answer('0')).expect('play', { media_id: GOODBYE });
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      await expectEnded(s, '1008', 'front-desk', {
        status: 'HANGUP',
        commands: 11,
        lastStep: 'end',
        vars: {
          ...VARS,
          choice: 'nothing',
          outcome: 'nothing',
          summary: 'front-desk call 1008 from +447700900123 ended (hangup) after choice nothing',
        },
      });
    },
  );

  it('closed outside 08:00-17:59 UTC: the closed message, goodbye, hangup', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '1005', ...UK, date_started: '2026-11-20 19:30:00' });
    (await call.start()).expect('play', {
      media_id: tts(
        'Thank you for calling Acme. Our office is closed. We are open every day from 8 in the morning until ' +
          '6 in the evening, UTC.',
      ),
    });
    (await call.answer('0')).expect('play', { media_id: GOODBYE });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '1005', 'front-desk', {
      status: 'HANGUP',
      commands: 3,
      lastStep: 'end',
      vars: {
        ...VARS,
        outcome: 'no choice',
        summary: 'front-desk call 1005 from +447700900123 ended (hangup) after choice none',
      },
    });
  });

  it.each([
    ['07:59:59', 'closed'],
    ['08:00:00', 'open'],
    ['17:59:59', 'open'],
    ['18:00:00', 'closed'],
  ])('at %s UTC the office is %s', async (time, state) => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '1006', ...UK, date_started: `2026-11-20 ${time}` });
    await call.start();
    if (state === 'open') call.expect('play', { media_id: WELCOME });
    else
      call.expect('play', {
        media_id: tts(
          'Thank you for calling Acme. Our office is closed. We are open every day from 8 in the morning ' +
            'until 6 in the evening, UTC.',
        ),
      });
  });
});

// ============================================================================================
describe('voicemail', () => {
  const URL_ = '/rt/voicemail';
  const VARS = { owner: 'Claire Martin', owner_mobile: '+447911123456', takes: 0, max_takes: 3 };
  const GREETING = tts(
    'Hello, you have reached the voicemail of Claire Martin. I cannot take your call right now. Please leave ' +
      'your message after the tone, and press the hash key when you have finished.',
    DANIEL,
  );
  const TONE = { media_id: '2001' };
  const RECORD = { max_duration: 120, silence: 5 };
  const REVIEW = { media_id: tts('Here is your message.') };
  const KEEP = [
    'To keep this message, press 1. To record it again, press 2.',
    'Press 1 to keep your message, or 2 to record it again.',
  ];
  const keep = (n: number) => ({ media_id: tts(KEEP[n]!), max_digits: 1, timeout_ms: 5000 });
  const REDO = { media_id: tts('Please record your message after the tone.') };
  const GOODBYE = { media_id: tts('Thank you, Claire will call you back. Goodbye.') };
  const CALLER = { cli_number: '+447700900456', number: '+447700900999' };
  /** send_confirmation: the text to the caller once the message is kept. */
  const CONFIRMATION = (to: string): SmsMessage => ({
    to,
    from: 'Acme',
    body: 'Your message for Claire Martin has been received. Claire will call you back.',
  });
  /** text_owner (hangup handler): the text to the owner, with no sender (the shared short code). */
  const TO_OWNER = (from: string, takes: number): SmsMessage => ({
    to: '+447911123456',
    body: `New voicemail from ${from} (${takes} take(s)).`,
    options: { nature: 'ALERTING' },
  });

  /**
   * Exactly these SMS were sent so far, in this order, each within the reply deadline (4000 ms less the 250 ms margin).
   */
  function expectSms(s: Served, want: SmsMessage[]) {
    expect(s.sms.map((x) => x.msg)).toStrictEqual(want);
    for (const { timeoutMs } of s.sms) {
      expect(timeoutMs).toBeGreaterThan(0);
      expect(timeoutMs).toBeLessThanOrEqual(3750);
    }
  }

  it(
    'records three takes (one not playable), cannot record a fourth, keeps the last: the caller and the owner ' +
      'get a text; retried requests mid-call',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2001', ...CALLER });
      (await call.start()).expect('play', { media_id: GREETING });
      await call.retry(); // a retried first request
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-1.wav')).expect('wait', { wait: 1 });
      await call.retry(); // a retried request carrying the record's result: the file name is saved once
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-1.wav' });
      (await call.answer('0')).expect('read', keep(0));
      // 2: takes 1 < 3, record again
      (await call.answer('2')).expect('play', REDO);
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-2.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-2.wav' });
      (await call.answer('1')).expect('play', {
        media_id: tts('Sorry, your message cannot be played back, but it has been recorded.'),
      });
      (await call.answer('0')).expect('read', keep(0)); // a goto: a new visit, the first prompt
      (await call.answer('2')).expect('play', REDO);
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-3.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-3.wav' });
      (await call.answer('0')).expect('read', keep(0));
      // 2 again: takes 3 is not < 3
      (await call.answer('2')).expect('play', {
        media_id: tts('Sorry, you cannot record your message again. Your last message has been kept.'),
      });
      expectSms(s, []);
      // kept: the confirmation goes out between this request and its reply
      (await call.answer('0')).expect('play', GOODBYE);
      expectSms(s, [CONFIRMATION('+447700900456')]);
      await call.retry(); // a retried request gets the stored reply: no second SMS
      expectSms(s, [CONFIRMATION('+447700900456')]);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      expectSms(s, [CONFIRMATION('+447700900456'), TO_OWNER('+447700900456', 3)]);
      await expectEnded(s, '2001', 'voicemail', {
        status: 'HANGUP',
        commands: 25,
        lastStep: 'end',
        vars: {
          ...VARS,
          takes: 3,
          message: 'rec-3.wav',
          message_kept: true,
          confirmation_sms: 'SMS00001',
          voicemail_file: 'rec-3.wav',
          voicemail_takes: 3,
          voicemail_from: '+447700900456',
          voicemail_filed: true,
        },
      });
      expect(s.warnings()).toEqual([]);
    },
  );

  it(
    'keep menu: TIMEOUT retry with the second prompt, a wrong key with its say, a second TIMEOUT keeps the ' +
      'message',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2002', ...CALLER, call_status: 'INCOMING_CALL' });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('msg-7f3a.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'msg-7f3a.wav' });
      (await call.answer('0')).expect('read', keep(0));
      (await call.answer('TIMEOUT')).expect('read', keep(1));
      (await call.answer('5')).expect('play', { media_id: tts('Please press 1 or 2.') });
      (await call.answer('0')).expect('read', keep(1)); // visit 3: the last prompt of the list
      // TIMEOUT's one retry is used: kept, the caller gets the confirmation
      (await call.answer('TIMEOUT')).expect('play', GOODBYE);
      expectSms(s, [CONFIRMATION('+447700900456')]);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expectSms(s, [CONFIRMATION('+447700900456'), TO_OWNER('+447700900456', 1)]);
      await expectEnded(s, '2002', 'voicemail', {
        status: 'HANGUP',
        commands: 12,
        lastStep: 'end',
        vars: {
          ...VARS,
          takes: 1,
          message: 'msg-7f3a.wav',
          message_kept: true,
          confirmation_sms: 'SMS00001',
          voicemail_file: 'msg-7f3a.wav',
          voicemail_takes: 1,
          voicemail_from: '+447700900456',
          voicemail_filed: true,
        },
      });
    },
  );

  it(
    'a caller who hangs up right after recording (HANGUP mid-call): the hangup handler files the message and ' +
      'texts the owner',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2003', ...CALLER });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-9.wav')).expect('wait', { wait: 1 });
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      expectSms(s, [TO_OWNER('+447700900456', 1)]); // never kept in the menu: no confirmation
      await call.retry(); // the terminal request again: the same hangup, the owner is not texted twice
      expectSms(s, [TO_OWNER('+447700900456', 1)]);
      await expectEnded(s, '2003', 'voicemail', {
        status: 'HANGUP',
        commands: 4,
        lastStep: 'pause',
        vars: {
          ...VARS,
          takes: 1,
          message: 'rec-9.wav',
          voicemail_file: 'rec-9.wav',
          voicemail_takes: 1,
          voicemail_from: '+447700900456',
          voicemail_filed: true,
        },
      });
    },
  );

  it(
    'a caller who hangs up while recording (the most common end): the HANGUP request carries the file name, save: ' +
      'keeps it before the hangup handler files the message and texts the owner',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2006', ...CALLER });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      await call.end('HANGUP', 'rec-12.wav');
      expect(await s.liveCalls()).toBe(0);
      expectSms(s, [TO_OWNER('+447700900456', 1)]);
      await expectEnded(s, '2006', 'voicemail', {
        status: 'HANGUP',
        commands: 3,
        lastStep: 'record_message',
        vars: {
          ...VARS,
          takes: 1,
          message: 'rec-12.wav',
          voicemail_file: 'rec-12.wav',
          voicemail_takes: 1,
          voicemail_from: '+447700900456',
          voicemail_filed: true,
        },
      });
    },
  );

  it(
    'a failed recording: the error say, goodbye; a withheld ' + 'caller hangs up during it: no message, no SMS',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2004', cli_number: '', cli_name: '', number: '+447700900999' });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.fail('RECORD_FAILED')).expect('play', {
        media_id: tts('Sorry, your message could not be recorded.'),
      });
      (await call.answer('0')).expect('play', GOODBYE);
      await call.end('HANGUP', '0');
      expect(await s.liveCalls()).toBe(0);
      expectSms(s, []); // notify_owner: no vars.message, straight to filed
      await expectEnded(s, '2004', 'voicemail', {
        status: 'HANGUP',
        commands: 5,
        lastStep: 'goodbye',
        vars: {
          ...VARS,
          takes: 1, // counted as the recording starts
          voicemail_file: '',
          voicemail_takes: 1,
          voicemail_from: 'withheld number',
          voicemail_filed: true,
        },
      });
    },
  );

  it(
    'a withheld caller keeps the message: no text to a number ' + 'we do not have; the owner is told it was withheld',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '2005', cli_number: '', cli_name: '', number: '+447700900999' });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-w.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-w.wav' });
      (await call.answer('0')).expect('read', keep(0));
      (await call.answer('1')).expect('play', GOODBYE); // confirm_by_sms: the caller is not a "+" number
      expectSms(s, []);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expectSms(s, [TO_OWNER('withheld number', 1)]);
      await expectEnded(s, '2005', 'voicemail', {
        status: 'HANGUP',
        commands: 9,
        lastStep: 'end',
        vars: {
          ...VARS,
          takes: 1,
          message: 'rec-w.wav',
          message_kept: true,
          voicemail_file: 'rec-w.wav',
          voicemail_takes: 1,
          voicemail_from: 'withheld number',
          voicemail_filed: true,
        },
      });
    },
  );

  it(
    'the SMS API refuses the confirmation to a landline (REJECTED): goodbye all the same, no hash saved, a ' +
      'warning; the owner is still texted',
    async () => {
      const s = await serve({
        sms: (msg) => {
          if (msg.to === '+442079460999') throw new EffectError('REJECTED', '400 invalid_number: not a mobile number');
          return '8242D945';
        },
      });
      const call = startCall(s.app, URL_, { callid: '2006', cli_number: '+442079460999', number: '+447700900999' });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-l.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-l.wav' });
      (await call.answer('0')).expect('read', keep(0));
      (await call.answer('1')).expect('play', GOODBYE); // on.error: goodbye
      expectSms(s, [CONFIRMATION('+442079460999')]);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expectSms(s, [CONFIRMATION('+442079460999'), TO_OWNER('+442079460999', 1)]);
      await expectEnded(s, '2006', 'voicemail', {
        status: 'HANGUP',
        commands: 9,
        lastStep: 'end',
        vars: {
          ...VARS,
          takes: 1,
          message: 'rec-l.wav',
          message_kept: true,
          voicemail_file: 'rec-l.wav',
          voicemail_takes: 1,
          voicemail_from: '+442079460999',
          voicemail_filed: true,
        },
      });
      expect(s.warnings().map(({ callid, code, step, msg }) => ({ callid, code, step, msg }))).toEqual([
        {
          callid: '2006',
          code: 'EFFECT_FAILED',
          step: 'send_confirmation',
          msg: 'sms at send_confirmation failed: REJECTED (400 invalid_number: not a mobile number)',
        },
      ]);
    },
  );

  it(
    'no SMS account configured: both texts fail with ' + 'UNAVAILABLE, the call and the filing go on as usual',
    async () => {
      const s = await serve({ sms: null });
      const call = startCall(s.app, URL_, { callid: '2007', ...CALLER });
      (await call.start()).expect('play', { media_id: GREETING });
      (await call.answer('0')).expect('play', TONE);
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('rec-u.wav')).expect('wait', { wait: 1 });
      (await call.answer('0')).expect('play', REVIEW);
      (await call.answer('0')).expect('play_record', { media_file: 'rec-u.wav' });
      (await call.answer('0')).expect('read', keep(0));
      (await call.answer('1')).expect('play', GOODBYE);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      await expectEnded(s, '2007', 'voicemail', {
        status: 'HANGUP',
        commands: 9,
        lastStep: 'end',
        vars: {
          ...VARS,
          takes: 1,
          message: 'rec-u.wav',
          message_kept: true,
          voicemail_file: 'rec-u.wav',
          voicemail_takes: 1,
          voicemail_from: '+447700900456',
          voicemail_filed: true,
        },
      });
      expect(s.warnings().map(({ code, step }) => ({ code, step }))).toEqual([
        { code: 'EFFECT_FAILED', step: 'send_confirmation' },
        { code: 'EFFECT_FAILED', step: 'text_owner' },
      ]);
      expect(s.warnings().every((w) => String(w.msg).includes('failed: UNAVAILABLE (no SMS account configured'))).toBe(
        true,
      );
    },
  );
});

// ============================================================================================
describe('support-line', () => {
  const URL_ = '/rt/support-line';
  const VARS = { priority_callers: ['+442079460555', '+12125550123'], support_number: '+442079460150' };
  const WAV = /play_wav_data: "([A-Za-z0-9+/=]+)"/.exec(readFileSync(join(FLOWS, 'support-line.yaml'), 'utf8'))![1]!;
  const WELCOME = { media_id: tts('Welcome to Acme Broadband technical support.') };
  const TRIAGE = [
    'If your internet connection is down, press 1. For help with your router or phone, press 2. If you know ' +
      'the extension of your engineer, press 3. To speak to an engineer, press 0.',
    'Press 1 for a connection problem, 2 for your router or phone, 3 for an extension, or 0 for an engineer.',
  ];
  const triage = (n: number) => ({ media_id: tts(TRIAGE[n]!), max_digits: 1, timeout_ms: 5000 });
  const ENGINEERS = (topic: string) => ({
    targets: [
      { number: '+442079460201', timeout: 20 },
      { number: '+442079460202', timeout: 20 },
      { number: '+12125550142', timeout: 30 },
    ],
    ringtone: 'MUSIC',
    whisper: tts(`Support call, topic ${topic}.`, DANIEL),
    cli: '+442079460150',
    cdr_field: 'supportqueue',
  });
  const LEAVE = {
    media_id: tts(
      'Sorry, all our engineers are busy. After the tone, please leave your name, your account number and a ' +
        'short description of the problem, then press hash. We will call you back within two working hours.',
    ),
  };
  const RECORD = { max_duration: 180, silence: 6 };
  const CALLER = { cli_number: '+447700900789', number: '+442079460150' };

  it(
    'a priority caller skips the menu: priority desk ' + 'NOANSWER, engineers NOANSWER, beep, message, thanks',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '3001', cli_number: '+442079460555', number: '+442079460150' });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('dialout', {
        targets: [
          { number: '+442079460301', timeout: 20 },
          { number: '+442079460302', timeout: 20 },
        ],
        ringtone: 'MUSIC',
        whisper: tts('Priority customer.'),
        cli: '+442079460150',
        cdr_field: 'priority',
      });
      (await call.answer('NOANSWER')).expect('dialout', ENGINEERS('none'));
      (await call.answer('NOANSWER')).expect('play', LEAVE);
      (await call.answer('0')).expect('play_wav_data', { audio_data: WAV });
      (await call.answer('0')).expect('record', RECORD);
      (await call.answer('ticket-42.wav')).expect('play', {
        media_id: tts('Thank you. An engineer will call you back on the number ending 0 5 5 5. Goodbye.'),
      });
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '3001', 'support-line', {
        status: 'HANGUP',
        commands: 8,
        lastStep: 'end',
        vars: { ...VARS, ticket_audio: 'ticket-42.wav', ticket: 'ticket-42.wav', log_topic: 'none', call_back: true },
      });
    },
  );

  it('router or phone: a line test with DTMF tones, TIMEOUT retries, the line sounds fine', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '3002', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', triage(0));
    const PHONE = {
      media_id: tts('To test the sound on your phone line, press 1. To speak to an engineer, press 2.'),
      max_digits: 1,
      timeout_ms: 5000,
    };
    (await call.answer('2')).expect('read', PHONE);
    (await call.answer('TIMEOUT')).expect('read', PHONE);
    (await call.answer('1')).expect('play', { media_id: tts('You will now hear six tones. Please listen carefully.') });
    (await call.answer('0')).expect('send_dtmf', { digits: '159*0#', duration_ms: 400, timeout_ms: 400 });
    await call.retry();
    const RESULT = [
      'If you heard six clear tones, press 1. If some were missing or the sound was crackly, press 2.',
      'Press 1 if the tones were clear, or 2 if they were not.',
    ];
    (await call.answer('0')).expect('read', { media_id: tts(RESULT[0]!), max_digits: 1, timeout_ms: 6000 });
    (await call.answer('TIMEOUT')).expect('read', { media_id: tts(RESULT[1]!), max_digits: 1, timeout_ms: 6000 });
    (await call.answer('1')).expect('play', {
      media_id: tts(
        'Your line sounds fine. If your phone still does not work, please restart your router and try again.',
      ),
    });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '3002', 'support-line', {
      status: 'HANGUP',
      commands: 10,
      lastStep: 'end',
      vars: { ...VARS, topic: '2', ticket: '', log_topic: '2', call_back: false },
    });
  });

  it(
    'an extension (_2XX): a wrong one, then 250 NOANSWER, engineers fail, no beep, the recording fails, ' +
      'failure; BUSY mid-call',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '3003', ...CALLER });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('read', triage(0));
      (await call.answer('9')).expect('play', { media_id: tts('Sorry, that is not one of the choices.') });
      (await call.answer('0')).expect('read', triage(1));
      const EXT = {
        media_id: tts('Please enter the three digit extension of your engineer.'),
        max_digits: 3,
        timeout_ms: 8000,
      };
      (await call.answer('3')).expect('read', EXT);
      (await call.answer('305')).expect('play', { media_id: tts('Sorry, support extensions start with 2.') });
      (await call.answer('0')).expect('read', EXT);
      (await call.answer('250')).expect('dialout', {
        targets: [{ number: '+442079460250', timeout: 30 }],
        ringtone: 'RING',
        whisper: tts('Direct call from +447700900789.'),
        cdr_field: 'ext250',
      });
      (await call.answer('NOANSWER')).expect('play', {
        media_id: tts('Your engineer is not available. I will put you through to the next free engineer.'),
      });
      (await call.answer('0')).expect('dialout', ENGINEERS('3'));
      (await call.fail('DIALOUT_FAILED')).expect('play', LEAVE);
      (await call.answer('0')).expect('play_wav_data', { audio_data: WAV });
      (await call.answer('1')).expect('record', RECORD); // the beep failed: record anyway
      (await call.fail('RECORD_FAILED')).expect('play', {
        media_id: tts('We are sorry, something went wrong. Please call again later.'),
      });
      await call.end('BUSY');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '3003', 'support-line', {
        status: 'BUSY',
        commands: 14,
        lastStep: 'failure',
        vars: { ...VARS, topic: '3', extension: '250', ticket: '', log_topic: '3', call_back: false },
      });
    },
  );

  it('a known outage (library media 3105), then the engineers; "0" in any read reaches the engineers', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '3004', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', triage(0));
    (await call.answer('1')).expect('play', { media_id: '3105' });
    (await call.answer('1')).expect('dialout', ENGINEERS('1')); // not played: go on anyway
    await call.end('HANGUP'); // bridged to an engineer: the call ends with the bridge
    await expectEnded(s, '3004', 'support-line', {
      status: 'HANGUP',
      commands: 4,
      lastStep: 'engineers',
      vars: { ...VARS, topic: '1', ticket: '', log_topic: '1', call_back: false },
    });

    const zero = startCall(s.app, URL_, { callid: '3005', ...CALLER });
    (await zero.start()).expect('play', WELCOME);
    (await zero.answer('0')).expect('read', triage(0));
    (await zero.answer('TIMEOUT')).expect('read', triage(1));
    (await zero.answer('0')).expect('dialout', ENGINEERS('0'));
    await zero.end('HANGUP');
    expect(await s.liveCalls()).toBe(0);
  });

  // triage saves every result in vars.topic, TIMEOUT and wrong keys included: once its
  // retries are used up, no_topic sets it to "none" for the whisper and the log.
  it('no choice in the menu (a wrong key, then nothing): the engineers hear topic none, not TIMEOUT', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '3010', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', triage(0));
    (await call.answer('8')).expect('play', { media_id: tts('Sorry, that is not one of the choices.') });
    (await call.answer('0')).expect('read', triage(1));
    (await call.answer('TIMEOUT')).expect('read', triage(1));
    (await call.answer('TIMEOUT')).expect('read', triage(1));
    (await call.answer('TIMEOUT')).expect('dialout', ENGINEERS('none'));
    await call.end('HANGUP');
    await expectEnded(s, '3010', 'support-line', {
      status: 'HANGUP',
      commands: 7,
      lastStep: 'engineers',
      vars: { ...VARS, topic: 'none', ticket: '', log_topic: 'none', call_back: false },
    });
  });

  describe('supervisor: ending a stuck call', () => {
    const PIN = {
      media_id: tts('Supervisor access. Please enter your PIN, followed by the hash key.'),
      max_digits: 6,
      timeout_ms: 10000,
    };
    const STUCK = {
      media_id: tts('Please enter the call ID of the call to end, followed by the hash key.'),
      max_digits: 20,
      timeout_ms: 20000,
    };
    const confirmStuck = (spelled: string) => ({
      media_id: tts(`You entered ${spelled}. To end that call, press 1. To enter another call ID, press 2.`),
      max_digits: 1,
      timeout_ms: 8000,
    });
    const NOT_ENDED = { media_id: tts('That call could not be ended. Please check the call ID.') };
    const MAX = '18446744073709551615';
    const SUPERVISOR = { cli_number: '+442079460199', number: '+442079460150' };

    it(
      'star (not announced), a wrong PIN ("0" is a PIN digit here, not the engineers), the PIN, a callid read ' +
        'back, another, hangup_callid 18446744073709551615 digit for digit',
      async () => {
        const s = await serve();
        const call = startCall(s.app, URL_, { callid: '3006', ...SUPERVISOR });
        (await call.start()).expect('play', WELCOME);
        (await call.answer('0')).expect('read', triage(0));
        (await call.answer('*')).expect('read', PIN);
        (await call.answer('0')).expect('play', { media_id: tts('That PIN is not correct.') }); // handlers: false
        (await call.answer('0')).expect('read', PIN);
        (await call.answer('739514')).expect('read', STUCK);
        (await call.answer('4242')).expect('read', confirmStuck('4 2 4 2'));
        (await call.answer('2')).expect('read', STUCK); // another call ID
        (await call.answer(MAX)).expect('read', confirmStuck('1 8 4 4 6 7 4 4 0 7 3 7 0 9 5 5 1 6 1 5'));
        (await call.answer('1')).expectRaw('hangup_callid', `{"callid":${MAX}}`);
        expect(call.body).toBe(
          `{"command":"hangup_callid","command_id":10,"params":{"callid":18446744073709551615},"variables":{}}`,
        );
        await call.retry(); // the same bytes again, the integer digit for digit
        (await call.answer('')).expect('play', { media_id: tts('The call has been ended. Goodbye.') });
        (await call.answer('0')).expect('hangup', {});
        await call.end('HANGUP');
        expect(await s.liveCalls()).toBe(0);
        await expectEnded(s, '3006', 'support-line', {
          status: 'HANGUP',
          commands: 12,
          lastStep: 'end',
          vars: {
            ...VARS,
            topic: 'supervisor',
            stuck_callid: MAX,
            ended_callid: MAX,
            ticket: '',
            log_topic: 'supervisor',
            call_back: false,
          },
        });
      },
    );

    it(
      'a callid above 2^64-1 is refused before it is sent; one the service refuses; a star in a callid; then ' +
        'nothing: hangup',
      async () => {
        const s = await serve();
        const call = startCall(s.app, URL_, {
          callid: '3007',
          ...SUPERVISOR,
          variables: '{"desk":"night","ticket":98765432109876543210}',
        });
        (await call.start()).expect('play', WELCOME);
        (await call.answer('0')).expect('read', triage(0));
        (await call.answer('*')).expect('read', PIN);
        (await call.answer('739514')).expect('read', STUCK);
        (await call.answer('18446744073709551616')).expect(
          'read',
          confirmStuck('1 8 4 4 6 7 4 4 0 7 3 7 0 9 5 5 1 6 1 6'),
        );
        // 2^64 is no callid: the rendered param is refused, the step's error branch
        (await call.answer('1')).expect('play', NOT_ENDED);
        (await call.answer('0')).expect('read', STUCK);
        (await call.answer('77')).expect('read', confirmStuck('7 7'));
        (await call.answer('1')).expectRaw('hangup_callid', '{"callid":77}');
        (await call.fail('CALL_NOT_FOUND')).expect('play', NOT_ENDED);
        (await call.answer('0')).expect('read', STUCK);
        (await call.answer('12*4')).expect('play', { media_id: tts('A call ID has digits only.') });
        (await call.answer('0')).expect('read', STUCK);
        (await call.answer('TIMEOUT')).expect('read', STUCK); // retries count per key: TIMEOUT has its own
        (await call.answer('TIMEOUT')).expect('hangup', {});
        await call.end('HANGUP');
        await expectEnded(s, '3007', 'support-line', {
          status: 'HANGUP',
          commands: 15,
          lastStep: 'end',
          vars: {
            ...VARS,
            topic: 'supervisor',
            stuck_callid: '77',
            ticket: '',
            log_topic: 'supervisor',
            call_back: false,
          }, // neither "12*4" nor TIMEOUT, and nothing ended
        });
        expect(s.warnings().map(({ code, step }) => ({ code, step }))).toEqual([
          { code: 'RUNTIME_PARAM', step: 'end_stuck_call' },
        ]);
      },
    );

    it.each([
      ['two wrong PINs', ['123456', '0'], 'That PIN is not correct.'],
      ['no PIN at all', ['TIMEOUT', 'TIMEOUT'], undefined],
    ])('%s: hung up, no call ID asked', async (_what, keys, say) => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '3008', ...SUPERVISOR });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('read', triage(0));
      (await call.answer('*')).expect('read', PIN);
      await call.answer(keys[0]!);
      if (say) {
        call.expect('play', { media_id: tts(say) });
        await call.answer('0');
      }
      call.expect('read', PIN);
      await call.answer(keys[1]!);
      if (say) {
        call.expect('play', { media_id: tts(say) });
        await call.answer('0');
      }
      call.expect('hangup', {});
      await call.end('HANGUP');
      await expectEnded(s, '3008', 'support-line', {
        status: 'HANGUP',
        commands: say ? 7 : 5,
        lastStep: 'end',
        vars: { ...VARS, topic: 'supervisor', ticket: '', log_topic: 'supervisor', call_back: false },
      });
    });

    it('no clear answer to the confirmation: hangup, nothing ended', async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '3009', ...SUPERVISOR });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('read', triage(0));
      (await call.answer('*')).expect('read', PIN);
      (await call.answer('739514')).expect('read', STUCK);
      (await call.answer('90210')).expect('read', confirmStuck('9 0 2 1 0'));
      (await call.answer('TIMEOUT')).expect('read', confirmStuck('9 0 2 1 0'));
      // handlers: false: "0" is no way to the engineers here
      (await call.answer('0')).expect('read', confirmStuck('9 0 2 1 0'));
      (await call.answer('TIMEOUT')).expect('hangup', {});
      await call.end('HANGUP');
      await expectEnded(s, '3009', 'support-line', {
        status: 'HANGUP',
        commands: 8,
        lastStep: 'end',
        vars: {
          ...VARS,
          topic: 'supervisor',
          stuck_callid: '90210',
          ticket: '',
          log_topic: 'supervisor',
          call_back: false,
        },
      });
    });
  });
});

// ============================================================================================
describe('conference', () => {
  const URL_ = '/rt/conference';
  const MEETINGS = {
    '4321': { name: 'weekly sales review', pin: '2468' },
    '5100': { name: 'board meeting', pin: '90210735' },
    '7007': { name: 'support stand-up', pin: '1357' },
  };
  const WELCOME = { media_id: tts('Welcome to the Acme conference service.') };
  const CHOOSE = [
    'To join a meeting with a meeting number, press 1. To join the open room, press 2. For help, press 0.',
    'Press 1 for a meeting, 2 for the open room, or 0 for help.',
  ];
  const choose = (n: number) => ({ media_id: tts(CHOOSE[n]!), max_digits: 1, timeout_ms: 5000 });
  const NUMBER = [
    'Please enter your four digit meeting number.',
    'Please enter the four digits of your meeting number, as written in your invitation.',
  ];
  const number = (n: number) => ({ media_id: tts(NUMBER[n]!), max_digits: 4, timeout_ms: 10000 });
  const ROOM = (meeting: string, name: string, pin: string) => ({
    id: `meeting-${meeting}`,
    pin_code: pin,
    pin_max_tries: 3,
    pin_wait: 10,
    pin_prompt: tts('Please enter the meeting PIN, followed by the hash key.'),
    pin_error: tts('That PIN is not correct.', DANIEL),
    pin_valid: tts('Thank you. You are now in the meeting. Press star to leave.'),
    welcome: tts(`You are joining the ${name}.`),
    waiting: '3001',
    user_join: tts('Someone has joined the meeting.'),
    user_leave: tts('Someone has left the meeting.'),
    auto_leave_when_alone: true,
    auto_leave_announce: tts('Everyone else has left, so the meeting is over for you too.'),
  });
  const AFTER = {
    media_id: tts(
      'You have left the meeting. To join it again, press 1. To join another meeting, press 2. Otherwise, ' +
        'just hang up.',
    ),
    max_digits: 1,
    timeout_ms: 6000,
  };
  const GOODBYE = { media_id: tts('Thank you for using the Acme conference service. Goodbye.') };
  const CALLER = { cli_number: '+447700900111', number: '+442079460900' };

  it(
    'help, a malformed and an unknown meeting number, the weekly sales review: leave, rejoin, closed by the ' +
      'organiser',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '4001', ...CALLER });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('read', choose(0));
      (await call.answer('0')).expect('play', {
        media_id: tts(
          'Your meeting number has four digits. It is in your invitation, next to the dial-in number. The open ' +
            'room needs no number.',
        ),
      });
      (await call.answer('0')).expect('read', choose(0));
      (await call.answer('1')).expect('read', number(0));
      // handlers: false: "0" is not help here, it is a meeting number too short
      (await call.answer('0')).expect('play', { media_id: tts('A meeting number has four digits.') });
      (await call.answer('0')).expect('read', number(1));
      (await call.answer('1234')).expect('play', {
        media_id: tts('Sorry, there is no meeting with the number 1 2 3 4.'),
      });
      (await call.answer('0')).expect('read', number(0));
      (await call.answer('4321')).expect('conference', ROOM('4321', 'weekly sales review', '2468'));
      (await call.answer('LEFT_CONFERENCE')).expect('read', AFTER);
      (await call.answer('1')).expect('conference', ROOM('4321', 'weekly sales review', '2468'));
      (await call.answer('CONFERENCE_CLOSED')).expect('play', {
        media_id: tts('The meeting has been closed by its organiser.'),
      });
      (await call.answer('0')).expect('play', GOODBYE);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '4001', 'conference', {
        status: 'HANGUP',
        commands: 15,
        lastStep: 'end',
        vars: {
          meetings: MEETINGS,
          meeting: '4321',
          room_name: 'weekly sales review',
          room_pin: '2468',
          joined: 'weekly sales review',
        },
      });
    },
  );

  it('the open room: simple_conference, then goodbye; CONGESTION mid-call', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '4002', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', choose(0));
    (await call.answer('2')).expect('play', { media_id: tts('You are joining the open room. Press star to leave.') });
    (await call.answer('0')).expect('simple_conference', { id: 'open-room', auto_leave_when_alone: true });
    (await call.answer('')).expect('play', GOODBYE);
    await call.end('CONGESTION');
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '4002', 'conference', {
      status: 'CONGESTION',
      commands: 5,
      lastStep: 'goodbye',
      vars: { meetings: MEETINGS, joined: 'open room or none' },
    });
  });

  it('a failing play: handlers.error says there is a problem; its own failure ends the call', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '4003', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.fail('PLAY_FAILED')).expect('play', {
      media_id: tts('We are sorry, the conference service has a problem. Please call again later.'),
    });
    (await call.fail('PLAY_FAILED')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '4003', 'conference', {
      status: 'HANGUP',
      commands: 3,
      lastStep: 'end',
      vars: { meetings: MEETINGS, joined: 'open room or none' },
    });
  });

  it.each([
    ['LAST_PARTICIPANT', undefined],
    ['PIN_ERROR', 'Sorry, that PIN is still not correct. Please check your invitation.'],
    ['PIN_TIMEOUT', 'I did not receive a PIN.'],
  ])('the board meeting (via another meeting), %s, goodbye', async (result, say) => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '4004', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', choose(0));
    (await call.answer('1')).expect('read', number(0));
    (await call.answer('7007')).expect('conference', ROOM('7007', 'support stand-up', '1357'));
    (await call.answer('LEFT_CONFERENCE')).expect('read', AFTER);
    (await call.answer('2')).expect('read', number(0));
    (await call.answer('5100')).expect('conference', ROOM('5100', 'board meeting', '90210735'));
    await call.answer(result);
    if (say) {
      call.expect('play', { media_id: tts(say) });
      await call.answer('0');
    }
    call.expect('play', GOODBYE);
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '4004', 'conference', {
      status: 'HANGUP',
      commands: say ? 10 : 9,
      lastStep: 'end',
      vars: {
        meetings: MEETINGS,
        meeting: '5100',
        room_name: 'board meeting',
        room_pin: '90210735',
        joined: 'board meeting',
      },
    });
  });
});

// ============================================================================================
describe('reminder (outbound)', () => {
  const URL_ = '/rt/reminder';
  const VARS = {
    patient: 'Mr Smith',
    dentist: 'Doctor Patel',
    appointment: '2025-06-12T10:30:00',
    practice: 'Riverside Dental Practice',
    reception: '+442079460321',
  };
  /**
   * An outbound call placed with calls.realtime: request_hash is the id it returned,
   * cdr_field the options.cdr_field the scheduler gave (here the appointment's reference:
   * the number is the patient's own, no switchboard).
   */
  const OUTBOUND = {
    app: 'APPREMIND',
    request_hash: '5f0c2e9a41d7b3c8',
    cli_name: '',
    cli_number: '+442079460321',
    number: '+447700900321',
    cdr_field: 'appt20250612',
    call_status: 'UP',
    date_started: '2025-06-11 16:00:00',
  };
  const OPENING = {
    media_id: tts('Hello, this is Riverside Dental Practice calling for Mr Smith.'),
    analysistime_ms: 5000,
    min_ms: 300,
    max_ms: 2500,
    silence_ms: 800,
  };
  const CONFIRM = [
    'This is a reminder of your appointment with Doctor Patel on Thursday 12 June at 10:30 AM. To confirm ' +
      'it, press 1. To cancel it, press 2. To speak to our reception, press 3. To hear this message again, ' +
      'press 9.',
    'Press 1 to confirm your appointment, 2 to cancel it, or 3 to speak to our reception.',
  ];
  const confirm = (n: number) => ({ media_id: tts(CONFIRM[n]!), max_digits: 1, timeout_ms: 7000 });
  const CONFIRMED = { media_id: tts('Thank you, your appointment on Thursday 12 June is confirmed. See you then.') };
  const MAX = '18446744073709551615';

  it(
    'callid 18446744073709551615: a person answers (TALK), ' + 'hears the message again (9), a wrong key, confirms',
    async () => {
      const s = await serve();
      const variables = '{"campaign":"june","batch":12345678901234567890}';
      const call = startCall(s.app, URL_, { ...OUTBOUND, callid: MAX, variables });
      (await call.start()).expect('play_talk_detect', OPENING);
      expect(call.body.startsWith('{"command":"play_talk_detect","command_id":1,')).toBe(true);
      (await call.answer('TALK')).expect('read', confirm(0));
      (await call.answer('9')).expect('read', confirm(0)); // goto itself: visit 1 again
      (await call.answer('4')).expect('play', { media_id: tts('Sorry, I did not understand.') });
      await call.retry();
      (await call.answer('0')).expect('read', confirm(1));
      (await call.answer('1')).expect('play', CONFIRMED);
      (await call.answer('0')).expect('hangup', {});
      expect(await s.liveCalls()).toBe(1);
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, MAX, 'reminder', {
        status: 'HANGUP',
        commands: 7,
        lastStep: 'end',
        vars: { ...VARS, answer: '1', outcome: 'confirmed', answered: '1' },
      });
      // ended calls stay ended: a late first request for the same callid is answered hangup
      const again = startCall(s.app, URL_, { ...OUTBOUND, callid: MAX, variables });
      (await again.start()).expect('hangup', {});
      expect(await s.liveCalls()).toBe(0);
    },
  );

  it('never answered (first request BUSY): the hangup handler reports not reached; the call ended line', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { ...OUTBOUND, callid: '5009', call_status: 'BUSY' });
    (await call.start()).expect('hangup', {});
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '5009', 'reminder', {
      status: 'BUSY',
      commands: 0,
      lastStep: '',
      vars: { ...VARS, outcome: 'not_reached', reason: 'busy', follow_up: 'call Mr Smith again about 12/06 10:30' },
    });
  });

  it('an answering machine ("0"): wait for silence, the message for the machine', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { ...OUTBOUND, callid: '5002' });
    (await call.start()).expect('play_talk_detect', OPENING);
    (await call.answer('0')).expect('wait_for_silence', { silence_ms: 1500, iterations: 3, timeout: 30 });
    (await call.answer('TIMEOUT')).expect('play', {
      media_id: tts(
        'Hello, this is a message from Riverside Dental Practice for Mr Smith. This is a reminder of your ' +
          'appointment with Doctor Patel on Thursday 12 June at 10:30 AM. To change it, please call us on 020 ' +
          '7946 0321. Thank you, goodbye.',
      ),
    });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '5002', 'reminder', {
      status: 'HANGUP',
      commands: 4,
      lastStep: 'end',
      vars: { ...VARS, outcome: 'message_left', answered: '' },
    });
  });

  it('the patient cancels; the call drops (NOANSWER) during the message', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { ...OUTBOUND, callid: '5003' });
    (await call.start()).expect('play_talk_detect', OPENING);
    (await call.answer('TALK')).expect('read', confirm(0));
    (await call.answer('2')).expect('play', {
      media_id: tts('Your appointment has been cancelled. Please call us on 020 7946 0321 to book a new one. Goodbye.'),
    });
    await call.end('NOANSWER');
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '5003', 'reminder', {
      status: 'NOANSWER',
      commands: 3,
      lastStep: 'thank_cancelled',
      vars: { ...VARS, answer: '2', outcome: 'cancelled', answered: '2' },
    });
  });

  it(
    "the patient asks for reception after a TIMEOUT: the dialout shows the patient's number, NOANSWER, " + 'unchanged',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, { ...OUTBOUND, callid: '5004' });
      (await call.start()).expect('play_talk_detect', OPENING);
      (await call.answer('TALK')).expect('read', confirm(0));
      (await call.answer('TIMEOUT')).expect('read', confirm(1));
      (await call.answer('3')).expect('dialout', {
        targets: [{ number: '+442079460321', timeout: 30 }],
        ringtone: 'MUSIC',
        whisper: tts('Reminder call: Mr Smith, appointment 12/06 10:30.'),
        cli: '+447700900321',
        cdr_field: 'reminder',
      });
      (await call.answer('NOANSWER')).expect('play', {
        media_id: tts('Sorry, our reception is busy. Your appointment is unchanged.'),
      });
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      await expectEnded(s, '5004', 'reminder', {
        status: 'HANGUP',
        commands: 6,
        lastStep: 'end',
        vars: { ...VARS, answer: '3', outcome: 'no_answer', answered: '3' },
      });
    },
  );

  it('renders the appointment the same on a server west of UTC', async () => {
    const tz = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const s = await serve();
      const call = startCall(s.app, URL_, { ...OUTBOUND, callid: '5005' });
      (await call.start()).expect('play_talk_detect', OPENING);
      (await call.answer('TALK')).expect('read', confirm(0));
      (await call.answer('1')).expect('play', CONFIRMED);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it(
    'cdr_field "ext4417": the number is a switchboard: wait for its greeting, key the extension, let it ring; ' +
      'the patient confirms',
    async () => {
      const s = await serve();
      const call = startCall(s.app, URL_, {
        ...OUTBOUND,
        number: '+442079460777',
        cdr_field: 'ext4417',
        callid: '5006',
      });
      (await call.start()).expect('wait', { wait: 3 });
      (await call.answer('0')).expect('send_dtmf', { digits: '4417#' });
      (await call.answer('0')).expect('wait', { wait: 8 });
      (await call.answer('0')).expect('play_talk_detect', OPENING);
      (await call.answer('TALK')).expect('read', confirm(0));
      (await call.answer('1')).expect('play', CONFIRMED);
      (await call.answer('0')).expect('hangup', {});
      await call.end('HANGUP');
      expect(await s.liveCalls()).toBe(0);
      await expectEnded(s, '5006', 'reminder', {
        status: 'HANGUP',
        commands: 7,
        lastStep: 'end',
        vars: { ...VARS, answer: '1', outcome: 'confirmed', answered: '1' },
      });
    },
  );

  it('a switchboard that drops the call while the extension rings (NOANSWER): the patient not reached', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { ...OUTBOUND, number: '+442079460777', cdr_field: 'ext20', callid: '5007' });
    (await call.start()).expect('wait', { wait: 3 });
    (await call.answer('0')).expect('send_dtmf', { digits: '20#' });
    (await call.answer('0')).expect('wait', { wait: 8 });
    await call.end('NOANSWER');
    await expectEnded(s, '5007', 'reminder', {
      status: 'NOANSWER',
      commands: 3,
      lastStep: 'extension_ring',
      vars: { ...VARS, outcome: 'not_reached', reason: 'noanswer', follow_up: 'call Mr Smith again about 12/06 10:30' },
    });
  });

  // Only "ext" followed by 1 to 10 digits names an extension; anything else is a plain tag.
  it.each(['', 'appt20250612', '4417', 'ext', 'ext44A7', 'EXT4417', 'ext12345678901'])(
    'cdr_field %j: no switchboard, the opening message first',
    async (cdr_field) => {
      const s = await serve();
      const call = startCall(s.app, URL_, { ...OUTBOUND, cdr_field, callid: '5008' });
      (await call.start()).expect('play_talk_detect', OPENING);
    },
  );
});

// ============================================================================================
describe('recording-consent', () => {
  const URL_ = '/rt/recording-consent';
  const VARS = { insurer: 'Acme Insurance', premium: '312.40', renewal_date: '2025-07-01', recorded: false };
  const WELCOME = { media_id: tts('Welcome to Acme Insurance renewals.') };
  const CONSENT = [
    'To renew your policy by phone, we need to record this call as evidence of your agreement. To accept the ' +
      'recording, press 1. If you do not want to be recorded, press 2 and an advisor will help you.',
    'Press 1 to accept the recording, or 2 to speak to an advisor without recording.',
  ];
  const consent = (n: number) => ({ media_id: tts(CONSENT[n]!), max_digits: 1, timeout_ms: 6000 });
  const START = {
    announce: tts('Thank you. This call is now recorded.'),
    feeds: 'both',
    locale: 'en_GB',
    transcription: true,
    ner: true,
    pii: true,
    sentiment: false,
  };
  const TERMS = {
    media_id: tts(
      'Your home insurance renews on 1 July 2025. Your new yearly premium is 312.40 pounds, with the same ' +
        'cover and an excess of 250 pounds. The full terms are in the letter we sent you.',
    ),
  };
  const AGREE = [
    'To agree to the renewal, press 1. To decline it, press 2. To hear the terms again, press 9. To speak to ' +
      'an advisor, press 0.',
    'Press 1 to agree, 2 to decline, 9 to hear the terms again, or 0 for an advisor.',
  ];
  const agree = (n: number) => ({ media_id: tts(AGREE[n]!), max_digits: 1, timeout_ms: 8000 });
  const ADVISOR = (recorded: boolean) => ({
    targets: [
      { number: '+442079460400', timeout: 30 },
      { number: '+442079460401', timeout: 30 },
    ],
    ringtone: 'MUSIC',
    whisper: tts(`Renewal call, recorded: ${recorded}.`),
    cdr_field: 'renewal',
  });
  const CALL_BACK = {
    media_id: tts(
      'Sorry, all our advisors are busy. Please call us again, we are open every day from 8 am to 8 pm. Goodbye.',
    ),
  };
  const CALLER = { cli_number: '+447700900222', number: '+442079460404' };

  it('consent, recording, terms heard twice (9), agreed: the recording stops, renewed', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '6001', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', consent(0));
    (await call.answer('1')).expect('start_call_recording', START);
    (await call.answer('R7K2M9Q4')).expect('play', TERMS);
    (await call.answer('0')).expect('read', agree(0));
    (await call.answer('9')).expect('play', TERMS);
    (await call.answer('0')).expect('read', agree(0));
    (await call.answer('1')).expect('stop_call_recording', { announce: tts('Recording has stopped.') });
    (await call.answer('R7K2M9Q5')).expect('play', {
      media_id: tts(
        'Thank you. Your policy is renewed from 1 July. You will receive a confirmation by email. Goodbye.',
      ),
    });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '6001', 'recording-consent', {
      status: 'HANGUP',
      commands: 10,
      lastStep: 'end',
      vars: {
        ...VARS,
        consent: '1',
        recording_hash: 'R7K2M9Q5',
        recorded: true,
        decision: '1',
        renewed: true,
        summary: 'renewal accepted, recording R7K2M9Q5',
        evidence: 'R7K2M9Q5',
        consent_given: true,
      },
    });
  });

  it('no consent after a TIMEOUT: not recorded, the advisors do not answer; REJECTED mid-call', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '6002', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', consent(0));
    (await call.answer('TIMEOUT')).expect('read', consent(1));
    (await call.answer('2')).expect('play', { media_id: tts('No problem, this call will not be recorded.') });
    (await call.answer('0')).expect('dialout', ADVISOR(false));
    (await call.answer('NOANSWER')).expect('play', CALL_BACK); // advisor_busy: not recorded -> call_back
    await call.end('REJECTED');
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '6002', 'recording-consent', {
      status: 'REJECTED',
      commands: 6,
      lastStep: 'call_back',
      vars: { ...VARS, consent: '2', evidence: 'none', consent_given: false },
    });
  });

  it('recorded, declined: the recording stops, not renewed', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '6003', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', consent(0));
    (await call.answer('1')).expect('start_call_recording', START);
    (await call.answer('H1')).expect('play', TERMS);
    (await call.answer('0')).expect('read', agree(0));
    (await call.answer('5')).expect('play', { media_id: tts('Sorry, that is not one of the choices.') });
    (await call.answer('0')).expect('read', agree(1));
    (await call.answer('2')).expect('stop_call_recording', { announce: tts('Recording has stopped.') });
    (await call.fail('NOT_RECORDING')).expect('play', {
      media_id: tts('Your policy will not be renewed. If you change your mind, please call us before 1 July. Goodbye.'),
    });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '6003', 'recording-consent', {
      status: 'HANGUP',
      commands: 10,
      lastStep: 'end',
      vars: {
        ...VARS,
        consent: '1',
        recording_hash: 'H1', // not changed by the failed stop
        recorded: true,
        decision: '2',
        renewed: false,
        summary: 'renewal declined, recording H1',
        evidence: 'H1',
        consent_given: true,
      },
    });
  });

  it('recorded, the terms cannot be played: the advisors do not answer, the recording stops silently', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '6004', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', consent(0));
    (await call.answer('1')).expect('start_call_recording', START);
    (await call.answer('H2')).expect('play', TERMS);
    (await call.answer('1')).expect('dialout', ADVISOR(true));
    (await call.answer('NOANSWER')).expect('stop_call_recording', { announce: '0' });
    (await call.answer('H2')).expect('play', CALL_BACK);
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '6004', 'recording-consent', {
      status: 'HANGUP',
      commands: 8,
      lastStep: 'end',
      vars: { ...VARS, consent: '1', recording_hash: 'H2', recorded: true, evidence: 'H2', consent_given: true },
    });
  });

  it('the recording cannot start: an advisor instead; the dialout fails: handlers.error', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '6005', ...CALLER });
    (await call.start()).expect('play', WELCOME);
    (await call.answer('0')).expect('read', consent(0));
    (await call.answer('1')).expect('start_call_recording', START);
    (await call.fail('RECORDING_UNAVAILABLE')).expect('play', {
      media_id: tts('Sorry, the call cannot be recorded at the moment.'),
    });
    (await call.answer('0')).expect('dialout', ADVISOR(false));
    (await call.fail('DIALOUT_FAILED')).expect('play', {
      media_id: tts('We are sorry, something went wrong. Please call again later.'),
    });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '6005', 'recording-consent', {
      status: 'HANGUP',
      commands: 7,
      lastStep: 'end',
      vars: { ...VARS, consent: '1', evidence: 'none', consent_given: true },
    });
  });

  // The renewal date is a calendar date: it must read the same whatever the server's time
  // zone. FAILS today: liquidjs reads the date-only "2025-07-01" as UTC midnight and the
  // `date` filter formats it in the process's local zone, so a server in New York says
  // "30 June 2025" and "renewed from 30 June" (the engine's Liquid setup fixes no zone).
  it('renders the renewal date the same on a server west of UTC', async () => {
    const tz = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const s = await serve();
      const call = startCall(s.app, URL_, { callid: '6006', ...CALLER });
      (await call.start()).expect('play', WELCOME);
      (await call.answer('0')).expect('read', consent(0));
      (await call.answer('1')).expect('start_call_recording', START);
      (await call.answer('H3')).expect('play', TERMS);
      (await call.answer('0')).expect('read', agree(0));
      (await call.answer('1')).expect('stop_call_recording', { announce: tts('Recording has stopped.') });
      (await call.answer('H3')).expect('play', {
        media_id: tts(
          'Thank you. Your policy is renewed from 1 July. You will receive a confirmation by email. Goodbye.',
        ),
      });
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});
