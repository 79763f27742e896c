/**
 * Whole calls through `fastify.inject` for every example flow of flows/, as the telephony
 * service makes them: each request is answered with the exact command, command_id and
 * params the flow says (templates resolved), each call ends with a terminal request whose
 * hangup handler is checked through the `call ended` log line, and the call is forgotten.
 *
 * Steps reached, per flow (every step of every flow, except where noted):
 * - front-desk: route, welcome, welcome_fr, menu, sales, accounts, info, count_visit,
 *   again, operator, operator_busy, closed, technical_problem, goodbye, end, log_call.
 * - voicemail: greeting, tone, record_message, count_take, pause, review_intro, playback,
 *   keep_or_redo, can_redo, redo, last_take, kept, goodbye, end, file_message.
 * - support-line: welcome, priority, triage, outage_check, phone_help, line_test_intro,
 *   line_test, line_test_result, extension, direct, priority_desk, engineers,
 *   leave_message, beep, record_problem, thanks, failure, end, log_call.
 * - conference: welcome, choose_room, help, meeting_number, find_meeting, unknown_meeting,
 *   meeting_found, meeting_room, after_leaving, open_room, open_room_bridge,
 *   technical_problem, goodbye, end, log_call.
 * - reminder: check_extension, opening, machine, machine_message, left_on_machine,
 *   confirm, confirmed, thank_confirmed, cancelled, thank_cancelled, other_call,
 *   reception, end, record_outcome. switchboard_pause, dial_extension, extension_ring and
 *   end_other_call need vars.extension / vars.other_callid, which no request can set
 *   (they are flow constants): they are reached with a copy of the flow whose vars hold
 *   values (see the last reminder test).
 * - recording-consent: welcome, ask_consent, no_consent, start_recording, mark_recorded,
 *   terms, agree, stop_recording, decide, outcome, renewed, declined, advisor,
 *   advisor_busy, stop_silently, call_back, problem, end, file_call.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
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

interface Served {
  app: FastifyInstance;
  /** The `call ended` log lines so far. */
  ended(): LogLine[];
  /** GET /health `calls`. */
  liveCalls(): Promise<number>;
  /** The loaded version of a flow. */
  version(flow: string): Promise<string>;
}

let current: FastifyInstance | undefined;
const tmpDirs: string[] = [];

afterEach(async () => {
  await current?.close();
  current = undefined;
  for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The callscript plugin on our own Fastify, its pino logger writing to memory. */
async function serve(flowsDir = FLOWS): Promise<Served> {
  const lines: string[] = [];
  const app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
  await app.register(callscript, { flowsDir, store: new MemoryStore() });
  await app.ready();
  current = app;
  const health = async () => (await app.inject({ method: 'GET', url: '/health' })).json();
  return {
    app,
    ended: () => lines.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg === 'call ended'),
    liveCalls: async () => (await health()).calls,
    version: async (flow) => (await health()).flows.find((f: { name: string }) => f.name === flow).version,
  };
}

/** Checks the one `call ended` line of a callid: flow, version, status, commands, last step, vars. */
async function expectEnded(s: Served, callid: string, flow: string, want: { status: string; commands: number; lastStep: string; vars: Record<string, unknown> }) {
  const lines = s.ended().filter((l) => l.callid === callid);
  expect(lines).toHaveLength(1);
  const { durationMs, level, time, pid, hostname, reqId, ...rest } = lines[0]!;
  expect(typeof durationMs).toBe('number');
  expect(rest).toEqual({ msg: 'call ended', callid, flow, version: await s.version(flow), ...want });
  void level, time, pid, hostname, reqId;
}

// ============================================================================================
describe('front-desk', () => {
  const URL_ = '/rt/front-desk';
  const VARS = { company: 'Acme', office_open: true, menu_visits: 0 };
  const MENU = { max_digits: 1, timeout_ms: 6000, attempts: 1 };
  const PROMPT = [
    'For sales, press 1. For accounts, press 2. To hear our address and opening hours, press 3. To speak to the operator, press 0 at any time.',
    'Sorry, I did not hear a choice. Press 1 for sales, 2 for accounts, 3 for our address and opening hours, or 0 for the operator.',
    'Please press 1, 2, 3, or 0 now.',
  ];
  const menu = (n: number) => ({ media_id: tts(PROMPT[n]!), ...MENU });
  const WELCOME = tts('Thank you for calling Acme.');
  const INFO = tts('Acme is at 12 Example Street, London. We are open Monday to Friday, from 8 in the morning until 6 in the evening.');
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
  const OPERATOR_BUSY = tts('Sorry, nobody is available to take your call. Please call again later, or send an email to hello at acme dot co dot uk.');
  const UK = { cli_number: '+447700900123', number: '+442079460000', date_started: '2026-11-20 09:15:00' };

  it('a UK caller hears the address three times, then goodbye; a retried request mid-call changes nothing', async () => {
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
      vars: { ...VARS, menu_visits: 3, choice: '3', outcome: '3', summary: 'front-desk call 1001 from +447700900123 ended (hangup) after choice 3' },
    });
  });

  it('a French caller: French welcome, TIMEOUT and no-match retries with say, sales NOANSWER, operator NOANSWER, then hangs up (HANGUP mid-call)', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '1002', cli_number: '+33612345678', number: '+442079460000', date_started: '2026-11-20 10:00:00' });
    (await call.start()).expect('play', { media_id: tts("Bonjour et merci d'appeler Acme. La suite de l'appel est en anglais.", 'TTS_FR-FR_AUDREY') });
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
    await expectEnded(s, '1002', 'front-desk', {
      status: 'HANGUP',
      commands: 9,
      lastStep: 'operator_busy',
      vars: { ...VARS, choice: '1', outcome: '1', summary: 'front-desk call 1002 from +33612345678 ended (hangup) after choice 1' },
    });
  });

  it('accounts NOANSWER, then the operator dialout fails: handlers.error plays the technical problem and hangs up', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '1003', ...UK });
    (await call.start()).expect('play', { media_id: WELCOME });
    (await call.answer('0')).expect('read', menu(0));
    (await call.answer('2')).expect('dialout', { targets: [{ number: '+442079460120', timeout: 25 }], ringtone: 'MUSIC', cdr_field: 'accounts' });
    (await call.answer('NOANSWER')).expect('play', { media_id: tts('Our accounts team is busy at the moment.') });
    (await call.answer('0')).expect('dialout', OPERATOR('2'));
    (await call.fail('DIALOUT_FAILED')).expect('play', { media_id: tts('We are sorry, we are having technical problems. Please call again later.') });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    expect(await s.liveCalls()).toBe(0);
    await expectEnded(s, '1003', 'front-desk', {
      status: 'HANGUP',
      commands: 7,
      lastStep: 'end',
      vars: { ...VARS, choice: '2', outcome: '2', summary: 'front-desk call 1003 from +447700900123 ended (hangup) after choice 2' },
    });
  });

  it('"0" in the menu reaches the operator from any prompt (handlers.on.read); operator NOANSWER, goodbye', async () => {
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
    // the callid is forgotten: a new first request for it starts the flow over
    const again = startCall(s.app, URL_, { callid: '1004', ...UK });
    (await again.start()).expect('play', { media_id: WELCOME });
  });

  it('closed outside 08:00-17:59 UTC: the closed message, goodbye, hangup', async () => {
    const s = await serve();
    const call = startCall(s.app, URL_, { callid: '1005', ...UK, date_started: '2026-11-20 19:30:00' });
    (await call.start()).expect('play', { media_id: tts('Thank you for calling Acme. Our office is closed. We are open Monday to Friday, from 8 in the morning until 6 in the evening.') });
    (await call.answer('0')).expect('play', { media_id: GOODBYE });
    (await call.answer('0')).expect('hangup', {});
    await call.end('HANGUP');
    await expectEnded(s, '1005', 'front-desk', {
      status: 'HANGUP',
      commands: 3,
      lastStep: 'end',
      vars: { ...VARS, outcome: 'no choice', summary: 'front-desk call 1005 from +447700900123 ended (hangup) after choice none' },
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
    else call.expect('play', { media_id: tts('Thank you for calling Acme. Our office is closed. We are open Monday to Friday, from 8 in the morning until 6 in the evening.') });
  });
});
