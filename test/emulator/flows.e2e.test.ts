/**
 * End to end over real HTTP: the emulator drives `callscript serve` (a child process)
 * through every example flow with the caller scripts of test/fixtures/callers/<flow>/,
 * which together take every branch of every flow. Each transcript is asserted command
 * by command: the command, its key param, the result the caller produced; then how the
 * call ended. The flows' sms steps send through the emulator's SMS REST API.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import { expectEnd, expectSteps, type Step } from './e2e-helpers.js';
import { LOGIN, PASSWORD, startEmulator, type Running } from './helpers.js';
import { ROOT, spawnServe, type Served } from './serve.js';
import { formatTranscript } from '../../src/emulator/driver/format.js';

const CALLERS = join(ROOT, 'test/fixtures/callers');
const RT = { login: 'callscript', password: 'rt-secret' };
const REC = /^rec-\d+-[0-9a-f]{8}\.wav$/;
const HASH = /^[A-Z0-9]{8}$/;

let e: Running;
let serve: Served;
let flowsDir: string;
const used = new Set<string>();

beforeAll(async () => {
  e = await startEmulator();
  flowsDir = mkdtempSync(join(tmpdir(), 'callscript-e2e-'));
  cpSync(join(ROOT, 'flows'), flowsDir, { recursive: true });
  // front-desk on a bank holiday: the same flow with office_open false.
  const desk = readFileSync(join(ROOT, 'flows/front-desk.yaml'), 'utf8');
  writeFileSync(
    join(flowsDir, 'front-desk-holiday.yaml'),
    desk.replace('name: front-desk', 'name: front-desk-holiday').replace('office_open: true', 'office_open: false'),
  );
  serve = await spawnServe(['--flows', flowsDir], {
    RT_LOGIN: RT.login,
    RT_PASSWORD: RT.password,
    SMS_BASE_URL: `${e.base}/rest/v1.1`,
    SMS_LOGIN: LOGIN,
    SMS_PASSWORD: PASSWORD,
  });
}, 30000);

afterAll(async () => {
  await serve?.stop();
  await e?.close();
  rmSync(flowsDir, { recursive: true, force: true });
});

/** Runs test/fixtures/callers/<dir>/<file> against /rt/<flow>. */
async function run(dir: string, file: string, extra: Record<string, unknown> = {}, flow = dir): Promise<Transcript> {
  used.add(`${dir}/${file}`);
  const caller_text = readFileSync(join(CALLERS, dir, file), 'utf8');
  return e.call({ url: `${serve.base}/rt/${flow}`, auth: RT, caller_text, caller_file: `${dir}/${file}`, ...extra });
}

/** The OUT SMS the emulator has, as [from, to, text]. */
async function smsOut(): Promise<string[][]> {
  const r = await e.req('/rest/v1.1/sms?type=OUT&from=2000-01-01%2000:00:00&to=2100-01-01%2000:00:00');
  return r.json.data.map((s: { from: string; to: string; text: string }) => [s.from, s.to, s.text]);
}

// ============================================================================================
describe('front-desk', () => {
  const WELCOME: Step = ['play', 'Thank you for calling Acme.', '0'];
  const MENU = ['For sales, press 1.', 'Sorry, I did not hear a choice.', 'Please press 1, 2, 3, or 0 now.'];
  const INFO = 'Acme is at 12 Example Street, London.';
  const GOODBYE: Step = ['play', 'Thank you for calling. Goodbye.', '0'];
  const OPERATOR = '+442079460100,+442079460101';
  const BUSY: Step = ['play', 'Sorry, nobody is available to take your call.', '0'];
  const HANGUP: Step = ['hangup', '', ''];

  it('info three times, then goodbye (route default, info, count_visit, again both ways)', async () => {
    const t = await run('front-desk', 'info-three-times.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', MENU[0]!, '3'],
      ['play', INFO, '0'],
      ['read', MENU[0]!, '3'],
      ['play', INFO, '0'],
      ['read', MENU[0]!, '3'],
      ['play', INFO, '0'],
      GOODBYE,
      HANGUP,
    ]);
    expectEnd(t, 'flow', { command: 'hangup' });
    expect(t).toMatchObject({
      from: '+447700900123',
      to: '+442079460000',
      date_started: '2026-11-23 10:00:00',
      request_hash: null,
    });
  });

  it(
    'a French caller: welcome_fr, TIMEOUT and no-match retries ' + 'with their prompts, sales and operator NOANSWER',
    async () => {
      const t = await run('front-desk', 'french-retries-sales-noanswer.yaml');
      expectSteps(t, [
        ['play', "TTS|TTS_FR-FR_AUDREY|Bonjour et merci d'appeler Acme.", '0'],
        ['read', MENU[0]!, 'TIMEOUT'],
        ['read', MENU[1]!, '7'],
        ['play', 'Sorry, 7 is not one of the choices.', '0'],
        ['read', MENU[2]!, '1'],
        ['dialout', '+442079460110', 'NOANSWER'],
        ['play', 'Our sales team is busy at the moment.', '0'],
        ['dialout', OPERATOR, 'NOANSWER'],
        BUSY,
        GOODBYE,
        HANGUP,
      ]);
      expect(t.commands[5]!.params).toEqual({
        targets: [{ number: '+442079460110', timeout: 25 }],
        ringtone: 'MUSIC',
        whisper: 'TTS|TTS_EN-GB_SERENA|Sales call from +33612345678.',
        cdr_field: 'sales',
      });
      expect(t.commands[7]!.params).toMatchObject({
        whisper: 'TTS|TTS_EN-GB_SERENA|Front desk call. The caller chose 1.',
        ringtone: 'RING',
      });
    },
  );

  it('sales answers: bridged, the caller hangs up, the next request is terminal', async () => {
    const t = await run('front-desk', 'sales-answered.yaml');
    expectSteps(t, [WELCOME, ['read', MENU[0]!, '1'], ['dialout', '+442079460110', '']]);
    expectEnd(t, 'bridge', { command: 'dialout' });
    expect(t.commands[2]!.caller).toBe('+442079460110 answered after 4 s; bridged 60 s; the caller hung up');
  });

  it('accounts answers', async () => {
    const t = await run('front-desk', 'accounts-answered.yaml');
    expectSteps(t, [WELCOME, ['read', MENU[0]!, '2'], ['dialout', '+442079460120', '']]);
    expectEnd(t, 'bridge', { command: 'dialout' });
  });

  it(
    'accounts NOANSWER, the operator dialout fails (error ' + 'branch), the apology fails too (its error branch)',
    async () => {
      const t = await run('front-desk', 'operator-fails.yaml');
      expectSteps(t, [
        WELCOME,
        ['read', MENU[0]!, '2'],
        ['dialout', '+442079460120', 'NOANSWER'],
        ['play', 'Our accounts team is busy at the moment.', '0'],
        ['dialout', OPERATOR, 'error:DIALOUT_FAILED'],
        ['play', 'We are sorry, we are having technical problems.', 'error:MEDIA_NOT_FOUND'],
        HANGUP,
      ]);
    },
  );

  it('"0" (flow-wide handler) to the operator, whose dialout fails: the apology plays', async () => {
    const t = await run('front-desk', 'operator-fails-apology.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', MENU[0]!, '0'],
      ['dialout', OPERATOR, 'error:DIALOUT_FAILED'],
      ['play', 'We are sorry, we are having technical problems.', '0'],
      HANGUP,
    ]);
    expect(t.commands[2]!.params).toMatchObject({
      whisper: 'TTS|TTS_EN-GB_SERENA|Front desk call. The caller chose 0.',
    });
  });

  it('"0" to the operator; the second target answers', async () => {
    const t = await run('front-desk', 'zero-operator-answered.yaml');
    expectSteps(t, [WELCOME, ['read', MENU[0]!, '0'], ['dialout', OPERATOR, '']]);
    expect(t.commands[2]!.caller).toBe(
      '+442079460100 did not answer (20 s); +442079460101 answered after 5 s; bridged 90 s; the callee hung up',
    );
    expectEnd(t, 'bridge', { command: 'dialout' });
  });

  it('no input three times: no_choice, the operator hears "nothing", nobody answers', async () => {
    const t = await run('front-desk', 'no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', MENU[0]!, 'TIMEOUT'],
      ['read', MENU[1]!, 'TIMEOUT'],
      ['read', MENU[2]!, 'TIMEOUT'],
      ['dialout', OPERATOR, 'NOANSWER'],
      BUSY,
      GOODBYE,
      HANGUP,
    ]);
    expect(t.commands[4]!.params).toMatchObject({
      whisper: 'TTS|TTS_EN-GB_SERENA|Front desk call. The caller chose nothing.',
    });
  });

  it('three wrong keys, each answered by a say, then no_choice; the operator answers', async () => {
    const t = await run('front-desk', 'wrong-keys.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', MENU[0]!, '5'],
      ['play', 'Sorry, 5 is not one of the choices.', '0'],
      ['read', MENU[1]!, '6'],
      ['play', 'Sorry, 6 is not one of the choices.', '0'],
      ['read', MENU[2]!, '9'],
      ['play', 'Sorry, 9 is not one of the choices.', '0'],
      ['dialout', OPERATOR, ''],
    ]);
    expect(t.commands[7]!.params).toMatchObject({
      whisper: 'TTS|TTS_EN-GB_SERENA|Front desk call. The caller chose nothing.',
    });
  });

  it('closed in the evening (hour switch)', async () => {
    const t = await run('front-desk', 'closed-evening.yaml');
    expectSteps(t, [['play', 'Thank you for calling Acme. Our office is closed.', '0'], GOODBYE, HANGUP]);
  });

  it('closed on a bank holiday (office_open false, a copy of the flow)', async () => {
    const t = await run('front-desk', 'closed-holiday.yaml', {}, 'front-desk-holiday');
    expectSteps(t, [['play', 'Thank you for calling Acme. Our office is closed.', '0'], GOODBYE, HANGUP]);
  });

  it('the caller hangs up in the menu: HANGUP carries the read', async () => {
    const t = await run('front-desk', 'hangs-up-in-menu.yaml');
    expectSteps(t, [WELCOME, ['read', MENU[0]!, '']]);
    expect(t.commands[1]!.status).toBe('interrupted');
    expectEnd(t, 'caller', { command: 'read' });
    expect(t.cli_name).toBe('Ada Lovelace');
  });
});

// ============================================================================================
describe('voicemail', () => {
  const GREETING: Step = ['play', 'TTS|TTS_EN-GB_DANIEL|Hello, you have reached the voicemail of Claire Martin.', '0'];
  const TONE: Step = ['play', '2001', '0'];
  const RECORD: Step = ['record', '120/5', REC];
  const PAUSE: Step = ['wait', '1', '0'];
  const INTRO: Step = ['play', 'Here is your message.', '0'];
  const PLAYBACK: Step = ['play_record', 'rec-', '0'];
  const KEEP = ['To keep this message, press 1.', 'Press 1 to keep your message, or 2 to record it again.'];
  const GOODBYE: Step = ['play', 'Thank you, Claire will call you back. Goodbye.', '0'];
  const HANGUP: Step = ['hangup', '', ''];
  const TAKE: Step[] = [TONE, RECORD, PAUSE, INTRO, PLAYBACK];
  const CONFIRM = 'Your message for Claire Martin has been received. Claire will call you back.';

  it('keeps the first take: the recording is played back; the caller and the owner get an SMS', async () => {
    const t = await run('voicemail', 'keeps-first-take.yaml');
    expectSteps(t, [GREETING, ...TAKE, ['read', KEEP[0]!, '1'], GOODBYE, HANGUP]);
    expect(t.commands[5]!.params).toEqual({ media_file: t.commands[2]!.result });
    expect(t.commands[2]!.caller).toBe('spoke 25 s, then 5 s of silence ended the recording');
    const sms = await smsOut();
    expect(sms).toContainEqual(['Acme', '+447911000111', CONFIRM]);
    expect(sms).toContainEqual(['38100', '+447911123456', 'New voicemail from +447911000111 (1 take(s)).']);
    // the transcript shows them, tied to the call by callscript's x-callscript-callid header, at the request being
    // answered
    expect(t.sms.map((s) => [s.from, s.to, s.text, s.matched_by, s.request])).toEqual([
      ['Acme', '+447911000111', CONFIRM, 'header', 8],
      // the hangup handler's, on the terminal request
      ['38100', '+447911123456', 'New voicemail from +447911000111 (1 take(s)).', 'header', 10],
    ]);
    const text = formatTranscript(t);
    expect(text).toMatch(
      /sms [A-Z0-9]{8} {2}Acme -> \+447911000111 {2}1 part GSM {2}\(sent while answering request 8\)\n {7}"Your message for Claire Martin/,
    );
    expect(text.indexOf('sms ')).toBeLessThan(text.indexOf('Thank you, Claire will call you back'));
  });

  it(
    'a withheld caller records three takes (one playback ' + 'fails), a fourth is refused; no SMS to the caller',
    async () => {
      const before = (await smsOut()).length;
      const t = await run('voicemail', 'records-three-times.yaml');
      const REDO: Step = ['play', 'Please record your message after the tone.', '0'];
      expectSteps(t, [
        GREETING,
        ...TAKE,
        ['read', KEEP[0]!, '2'],
        REDO,
        TONE,
        RECORD,
        PAUSE,
        INTRO,
        ['play_record', 'rec-', '1'],
        ['play', 'Sorry, your message cannot be played back, but it has been recorded.', '0'],
        ['read', KEEP[0]!, '2'],
        REDO,
        ...TAKE,
        ['read', KEEP[0]!, '2'],
        ['play', 'Sorry, you cannot record your message again. Your last message has been kept.', '0'],
        GOODBYE,
        HANGUP,
      ]);
      expect(t.from).toBe('');
      expect((await smsOut()).slice(before)).toEqual([
        ['38100', '+447911123456', 'New voicemail from withheld number (3 take(s)).'],
      ]);
    },
  );

  it('the recording fails: the error branch apologises; nothing to tell the owner', async () => {
    const before = (await smsOut()).length;
    const t = await run('voicemail', 'record-fails.yaml');
    expectSteps(t, [
      GREETING,
      TONE,
      ['record', '120/5', 'error:RECORD_FAILED'],
      ['play', 'Sorry, your message could not be recorded.', '0'],
      GOODBYE,
      HANGUP,
    ]);
    expect((await smsOut()).length).toBe(before);
  });

  it('hangs up right after recording: HANGUP during the pause; the hangup handler texts the owner', async () => {
    const t = await run('voicemail', 'hangs-up-after-recording.yaml');
    expectSteps(t, [GREETING, TONE, RECORD, ['wait', '1', '']]);
    expectEnd(t, 'caller', { command: 'wait' });
    expect(await smsOut()).toContainEqual(['38100', '+447911123456', 'New voicemail from +447911000222 (1 take(s)).']);
    expect(await smsOut()).not.toContainEqual(['Acme', '+447911000222', CONFIRM]);
  });

  it('hangs up while recording: the HANGUP request carries the file name, save: keeps it; owner texted', async () => {
    const t = await run('voicemail', 'hangs-up-while-recording.yaml');
    expectSteps(t, [GREETING, TONE, RECORD]);
    expectEnd(t, 'caller', { command: 'record', command_result: REC });
    expect(await smsOut()).toContainEqual(['38100', '+447911123456', 'New voicemail from +447911000444 (1 take(s)).']);
  });

  it('a wrong key, then silence, keep the message; the confirmation SMS fails (the sms error branch)', async () => {
    await e.req('/emulator/sms-failures/+447911000333', {
      method: 'PUT',
      body: { http: 400, code: 11, message: 'the recipient cannot receive SMS' },
    });
    const t = await run('voicemail', 'no-answer-to-review.yaml');
    expectSteps(t, [
      GREETING,
      ...TAKE,
      ['read', KEEP[0]!, '5'],
      ['play', 'Please press 1 or 2.', '0'],
      ['read', KEEP[1]!, 'TIMEOUT'],
      ['read', KEEP[1]!, 'TIMEOUT'],
      GOODBYE,
      HANGUP,
    ]);
    const sms = await smsOut();
    expect(sms.filter((s) => s[1] === '+447911000333')).toEqual([]);
    expect(sms).toContainEqual(['38100', '+447911123456', 'New voicemail from +447911000333 (1 take(s)).']);
  });

  it('hangs up during the greeting: nothing recorded, no SMS', async () => {
    const before = (await smsOut()).length;
    const t = await run('voicemail', 'hangs-up-at-greeting.yaml');
    expectSteps(t, [['play', GREETING[1], '']]);
    expectEnd(t, 'caller', { command: 'play' });
    expect((await smsOut()).length).toBe(before);
  });
});

// ============================================================================================
describe('support-line', () => {
  const WELCOME: Step = ['play', 'Welcome to Acme Broadband technical support.', '0'];
  const TRIAGE = ['If your internet connection is down, press 1.', 'Press 1 for a connection problem'];
  const ENGINEERS = '+442079460201,+442079460202,+12125550142';
  const PHONE = 'To test the sound on your phone line, press 1.';
  const TESTED = ['If you heard six clear tones, press 1.', 'Press 1 if the tones were clear'];
  const EXT = 'Please enter the three digit extension of your engineer.';
  const LEAVE: Step = ['play', 'Sorry, all our engineers are busy.', '0'];
  const HANGUP: Step = ['hangup', '', ''];
  const LINE_TEST: Step[] = [
    ['read', TRIAGE[0]!, '2'],
    ['read', PHONE, '1'],
    ['play', 'You will now hear six tones.', '0'],
    ['send_dtmf', '159*0#', '0'],
  ];
  const PIN = 'Supervisor access.';
  const CALLID = 'Please enter the call ID of the call to end';
  const SUPERVISOR: Step[] = [WELCOME, ['read', TRIAGE[0]!, '*']];
  const bridged = (t: Transcript) => expectEnd(t, 'bridge', { command: 'dialout' });

  it('a priority caller reaches the priority desk (cli, whisper, cdr_field)', async () => {
    const t = await run('support-line', 'priority-answered.yaml');
    expectSteps(t, [WELCOME, ['dialout', '+442079460301,+442079460302', '']]);
    expect(t.commands[1]!.params).toEqual({
      targets: [
        { number: '+442079460301', timeout: 20 },
        { number: '+442079460302', timeout: 20 },
      ],
      ringtone: 'MUSIC',
      whisper: 'TTS|TTS_EN-GB_SERENA|Priority customer.',
      cli: '+442079460150',
      cdr_field: 'priority',
    });
    bridged(t);
  });

  it('the priority desk NOANSWER: on to the engineers', async () => {
    const t = await run('support-line', 'priority-noanswer.yaml');
    expectSteps(t, [WELCOME, ['dialout', '+442079460301,+442079460302', 'NOANSWER'], ['dialout', ENGINEERS, '']]);
    bridged(t);
  });

  it('connection down: the outage message, no engineer, the beep (play_wav_data), a message recorded', async () => {
    const t = await run('support-line', 'outage-message-left.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '1'],
      ['play', '3105', '0'],
      ['dialout', ENGINEERS, 'NOANSWER'],
      LEAVE,
      ['play_wav_data', 'wav', '0'],
      ['record', '180/6', REC],
      ['play', 'Thank you. An engineer will call you back on the number ending 0 1 2 3. Goodbye.', '0'],
      HANGUP,
    ]);
    expect(t.commands[3]!.params).toMatchObject({
      whisper: 'TTS|TTS_EN-GB_DANIEL|Support call, topic 1.',
      cli: '+442079460150',
      cdr_field: 'supportqueue',
    });
  });

  it('everything fails: outage play 1, engineers error, no beep, record error, the apology error', async () => {
    const t = await run('support-line', 'everything-fails.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '1'],
      ['play', '3105', '1'],
      ['dialout', ENGINEERS, 'error:DIALOUT_FAILED'],
      LEAVE,
      ['play_wav_data', 'wav', '1'],
      ['record', '180/6', 'error:RECORD_FAILED'],
      ['play', 'We are sorry, something went wrong.', 'error:MEDIA_NOT_FOUND'],
      HANGUP,
    ]);
  });

  it('the recording fails: the apology plays', async () => {
    const t = await run('support-line', 'record-fails.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '1'],
      ['play', '3105', '0'],
      ['dialout', ENGINEERS, 'NOANSWER'],
      LEAVE,
      ['play_wav_data', 'wav', '0'],
      ['record', '180/6', 'error:RECORD_FAILED'],
      ['play', 'We are sorry, something went wrong.', '0'],
      HANGUP,
    ]);
  });

  it('the line test sounds fine', async () => {
    const t = await run('support-line', 'line-test-ok.yaml');
    expectSteps(t, [WELCOME, ...LINE_TEST, ['read', TESTED[0]!, '1'], ['play', 'Your line sounds fine.', '0'], HANGUP]);
    expect(t.commands[4]!.params).toEqual({ digits: '159*0#', duration_ms: 400, timeout_ms: 400 });
  });

  it('the line test is crackly: an engineer', async () => {
    const t = await run('support-line', 'line-test-crackly.yaml');
    expectSteps(t, [
      WELCOME,
      ...LINE_TEST,
      ['read', TESTED[0]!, '2'],
      ['play', 'Your line may be faulty.', '0'],
      ['dialout', ENGINEERS, ''],
    ]);
    expect(t.commands[7]!.params).toMatchObject({ whisper: 'TTS|TTS_EN-GB_DANIEL|Support call, topic 2.' });
  });

  it('the tones cannot be sent (send_dtmf error): an engineer', async () => {
    const t = await run('support-line', 'line-test-fails.yaml');
    expectSteps(t, [
      WELCOME,
      ...LINE_TEST.slice(0, 3),
      ['send_dtmf', '159*0#', 'error:DTMF_FAILED'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('no answer after the tones, twice', async () => {
    const t = await run('support-line', 'line-test-no-answer.yaml');
    expectSteps(t, [
      WELCOME,
      ...LINE_TEST,
      ['read', TESTED[0]!, 'TIMEOUT'],
      ['read', TESTED[1]!, 'TIMEOUT'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('wrong keys after the tones, twice', async () => {
    const t = await run('support-line', 'line-test-wrong-keys.yaml');
    expectSteps(t, [
      WELCOME,
      ...LINE_TEST,
      ['read', TESTED[0]!, '7'],
      ['read', TESTED[1]!, '8'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('router help: 2 for an engineer', async () => {
    const t = await run('support-line', 'phone-help-engineer.yaml');
    expectSteps(t, [WELCOME, ['read', TRIAGE[0]!, '2'], ['read', PHONE, '2'], ['dialout', ENGINEERS, '']]);
  });

  it('router help: no answer twice', async () => {
    const t = await run('support-line', 'phone-help-no-answer.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '2'],
      ['read', PHONE, 'TIMEOUT'],
      ['read', PHONE, 'TIMEOUT'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('router help: wrong keys twice, each with a say', async () => {
    const t = await run('support-line', 'phone-help-wrong-keys.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '2'],
      ['read', PHONE, '5'],
      ['play', 'Please press 1 or 2.', '0'],
      ['read', PHONE, '6'],
      ['play', 'Please press 1 or 2.', '0'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('a direct extension (_2XX) answers; its number is templated', async () => {
    const t = await run('support-line', 'extension-answered.yaml');
    expectSteps(t, [WELCOME, ['read', TRIAGE[0]!, '3'], ['read', EXT, '234'], ['dialout', '+442079460234', '']]);
    expect(t.commands[3]!.params).toMatchObject({
      ringtone: 'RING',
      cdr_field: 'ext234',
      whisper: 'TTS|TTS_EN-GB_SERENA|Direct call from +447700900123.',
    });
  });

  it('the extension (typed with #) does not answer: the queue', async () => {
    const t = await run('support-line', 'extension-noanswer.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '3'],
      ['read', EXT, '210'],
      ['dialout', '+442079460210', 'NOANSWER'],
      ['play', 'Your engineer is not available.', '0'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('the extension dialout fails: the queue', async () => {
    const t = await run('support-line', 'extension-refused.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '3'],
      ['read', EXT, '299'],
      ['dialout', '+442079460299', 'error:INVALID_NUMBER'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('no extension typed, twice', async () => {
    const t = await run('support-line', 'extension-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '3'],
      ['read', EXT, 'TIMEOUT'],
      ['read', EXT, 'TIMEOUT'],
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('extensions outside 200-299, three times', async () => {
    const t = await run('support-line', 'extension-wrong.yaml');
    const SORRY: Step = ['play', 'Sorry, support extensions start with 2.', '0'];
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '3'],
      ['read', EXT, '199'],
      SORRY,
      ['read', EXT, '300'],
      SORRY,
      ['read', EXT, '12'],
      SORRY,
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('"0" goes straight to the engineers (flow-wide handler); the third target answers', async () => {
    const t = await run('support-line', 'zero-engineers.yaml');
    expectSteps(t, [WELCOME, ['read', TRIAGE[0]!, '0'], ['dialout', ENGINEERS, '']]);
    expect(t.commands[2]!.caller).toBe(
      '+442079460201 did not answer (20 s); +442079460202 did not answer (20 s); +12125550142 answered after ' +
        '5 s; bridged 120 s; the callee hung up',
    );
  });

  it('no choice three times: no_topic, the whisper says none', async () => {
    const t = await run('support-line', 'triage-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, 'TIMEOUT'],
      ['read', TRIAGE[1]!, 'TIMEOUT'],
      ['read', TRIAGE[1]!, 'TIMEOUT'],
      ['dialout', ENGINEERS, ''],
    ]);
    expect(t.commands[4]!.params).toMatchObject({ whisper: 'TTS|TTS_EN-GB_DANIEL|Support call, topic none.' });
  });

  it('wrong keys three times: no_topic', async () => {
    const t = await run('support-line', 'triage-wrong-keys.yaml');
    const SORRY: Step = ['play', 'Sorry, that is not one of the choices.', '0'];
    expectSteps(t, [
      WELCOME,
      ['read', TRIAGE[0]!, '4'],
      SORRY,
      ['read', TRIAGE[1]!, '5'],
      SORRY,
      ['read', TRIAGE[1]!, '6'],
      SORRY,
      ['dialout', ENGINEERS, ''],
    ]);
  });

  it('a supervisor ends a call by callid: hangup_callid carries 18446744073709551615 as a JSON integer', async () => {
    const t = await run('support-line', 'supervisor-ends-call.yaml');
    expectSteps(t, [
      ...SUPERVISOR,
      ['read', PIN, '739514'],
      ['read', CALLID, '18446744073709551615'],
      ['read', 'You entered 1 8 4 4 6 7 4 4 0 7 3 7 0 9 5 5 1 6 1 5. To end that call, press 1.', '1'],
      ['hangup_callid', '18446744073709551615', ''],
      ['play', 'The call has been ended. Goodbye.', '0'],
      HANGUP,
    ]);
    expect(t.commands[5]!.caller).toBe('no live call 18446744073709551615: nothing to hang up');
  });

  it('a supervisor ends a live call of the emulator: that call is interrupted at once', async () => {
    const a = await e.req('/emulator/calls', {
      body: {
        url: `${serve.base}/rt/front-desk`,
        auth: RT,
        realtime: true,
        wait: false,
        caller: { call: { date: '2026-11-23 10:00:00' } },
      },
    });
    expect(a.status).toBe(202);
    const { id, callid } = a.json;
    const b = await e.call({
      url: `${serve.base}/rt/support-line`,
      auth: RT,
      caller: {
        name: 'supervisor',
        actions: [{ read: '*' }, { read: '739514' }, { read: `${callid}#` }, { read: '1' }],
      },
    });
    expect(b.commands.map((c) => c.command)).toEqual([
      'play',
      'read',
      'read',
      'read',
      'read',
      'hangup_callid',
      'play',
      'hangup',
    ]);
    expect(b.commands[5]).toMatchObject({
      params: { callid: /^\d+$/.test(callid) && Number.isSafeInteger(Number(callid)) ? Number(callid) : callid },
      caller: `call ${callid} (${id}) was hung up`,
    });
    await Promise.allSettled([...e.emu.ctx.background]);
    const ta = (await e.req(`/emulator/calls/${id}`)).json as Transcript;
    expect(ta.ended_by).toBe('hangup_callid');
    expect(ta.commands.at(-1)!.status).toBe('interrupted');
    expect(ta.final).toMatchObject({ call_status: 'HANGUP', command: ta.commands.at(-1)!.command, http_status: 200 });
  });

  it('a supervisor retypes the callid (2), ending it fails (error branch), a wrong key twice ends', async () => {
    const t = await run('support-line', 'supervisor-retypes.yaml');
    const CONFIRM = (d: string) => `You entered ${d}. To end that call, press 1.`;
    expectSteps(t, [
      ...SUPERVISOR,
      ['read', PIN, '739514'],
      ['read', CALLID, '42'],
      ['read', CONFIRM('4 2'), '2'],
      ['read', CALLID, '43'],
      ['read', CONFIRM('4 3'), '1'],
      ['hangup_callid', '43', 'error:CALL_NOT_FOUND'],
      ['play', 'That call could not be ended. Please check the call ID.', '0'],
      ['read', CALLID, '44'],
      ['read', CONFIRM('4 4'), '9'],
      ['read', CONFIRM('4 4'), '9'],
      HANGUP,
    ]);
  });

  it('no PIN, twice', async () => {
    const t = await run('support-line', 'supervisor-no-input.yaml');
    expectSteps(t, [...SUPERVISOR, ['read', PIN, 'TIMEOUT'], ['read', PIN, 'TIMEOUT'], HANGUP]);
  });

  it('wrong PINs, twice (0 is a digit here, not the handler)', async () => {
    const t = await run('support-line', 'supervisor-wrong-pin.yaml');
    const WRONG: Step = ['play', 'That PIN is not correct.', '0'];
    expectSteps(t, [...SUPERVISOR, ['read', PIN, '123456'], WRONG, ['read', PIN, '000000'], WRONG, HANGUP]);
  });

  it('no callid, twice', async () => {
    const t = await run('support-line', 'supervisor-callid-no-input.yaml');
    expectSteps(t, [
      ...SUPERVISOR,
      ['read', PIN, '739514'],
      ['read', CALLID, 'TIMEOUT'],
      ['read', CALLID, 'TIMEOUT'],
      HANGUP,
    ]);
  });

  it('a callid with a star, twice', async () => {
    const t = await run('support-line', 'supervisor-callid-not-digits.yaml');
    const DIGITS: Step = ['play', 'A call ID has digits only.', '0'];
    expectSteps(t, [
      ...SUPERVISOR,
      ['read', PIN, '739514'],
      ['read', CALLID, '12*4'],
      DIGITS,
      ['read', CALLID, '*'],
      DIGITS,
      HANGUP,
    ]);
  });

  it('no confirmation, twice', async () => {
    const t = await run('support-line', 'supervisor-confirm-no-input.yaml');
    expectSteps(t, [
      ...SUPERVISOR,
      ['read', PIN, '739514'],
      ['read', CALLID, '42'],
      ['read', 'You entered 4 2.', 'TIMEOUT'],
      ['read', 'You entered 4 2.', 'TIMEOUT'],
      HANGUP,
    ]);
  });
});

// ============================================================================================
describe('conference', () => {
  const WELCOME: Step = ['play', 'Welcome to the Acme conference service.', '0'];
  const CHOOSE = [
    'To join a meeting with a meeting number, press 1.',
    'Press 1 for a meeting, 2 for the open room, or 0 for help.',
  ];
  const NUMBER = [
    'Please enter your four digit meeting number.',
    'Please enter the four digits of your meeting number',
  ];
  const AFTER = 'You have left the meeting.';
  const GOODBYE: Step = ['play', 'Thank you for using the Acme conference service. Goodbye.', '0'];
  const HANGUP: Step = ['hangup', '', ''];
  const OPEN: Step[] = [
    ['play', 'You are joining the open room. Press star to leave.', '0'],
    ['simple_conference', 'open-room', ''],
  ];

  it('joins with the right PIN, leaves with star, rejoins until the organiser closes the room', async () => {
    const t = await run('conference', 'meeting-leave-and-rejoin.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '4321'],
      ['conference', 'meeting-4321', 'LEFT_CONFERENCE'],
      ['read', AFTER, '1'],
      ['conference', 'meeting-4321', 'CONFERENCE_CLOSED'],
      ['play', 'The meeting has been closed by its organiser.', '0'],
      GOODBYE,
      HANGUP,
    ]);
    expect(t.commands[3]!.params).toEqual({
      id: 'meeting-4321',
      pin_code: '2468',
      pin_max_tries: 3,
      pin_wait: 10,
      welcome: 'TTS|TTS_EN-GB_SERENA|You are joining the weekly sales review.',
      pin_prompt: 'TTS|TTS_EN-GB_SERENA|Please enter the meeting PIN, followed by the hash key.',
      pin_error: 'TTS|TTS_EN-GB_DANIEL|That PIN is not correct.',
      pin_valid: 'TTS|TTS_EN-GB_SERENA|Thank you. You are now in the meeting. Press star to leave.',
      waiting: '3001',
      user_join: 'TTS|TTS_EN-GB_SERENA|Someone has joined the meeting.',
      user_leave: 'TTS|TTS_EN-GB_SERENA|Someone has left the meeting.',
      auto_leave_when_alone: true,
      auto_leave_announce: 'TTS|TTS_EN-GB_SERENA|Everyone else has left, so the meeting is over for you too.',
    });
    expect(t.commands[3]!.caller).toBe('typed PIN 2468 (right); in the room 600 s, left with *');
  });

  it('switches meetings (2 after leaving), stays until last', async () => {
    const t = await run('conference', 'meeting-switch.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '5100'],
      ['conference', 'meeting-5100', 'LEFT_CONFERENCE'],
      ['read', AFTER, '2'],
      ['read', NUMBER[0]!, '7007'],
      ['conference', 'meeting-7007', 'LAST_PARTICIPANT'],
      GOODBYE,
      HANGUP,
    ]);
    expect(t.commands[3]!.params).toMatchObject({ pin_code: '90210735' });
    expect(t.commands[6]!.params).toMatchObject({ pin_code: '1357' });
  });

  it('an unknown meeting, then three wrong PINs: PIN_ERROR', async () => {
    const t = await run('conference', 'unknown-meeting-wrong-pin.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '1234'],
      ['play', 'Sorry, there is no meeting with the number 1 2 3 4.', '0'],
      ['read', NUMBER[0]!, '4321'],
      ['conference', 'meeting-4321', 'PIN_ERROR'],
      ['play', 'Sorry, that PIN is still not correct.', '0'],
      GOODBYE,
      HANGUP,
    ]);
    expect(t.commands[5]!.caller).toBe('typed PIN 1111 (wrong), 2222 (wrong), 3333 (wrong); not let in: PIN_ERROR');
  });

  it('no PIN: PIN_TIMEOUT', async () => {
    const t = await run('conference', 'pin-timeout.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '4321'],
      ['conference', 'meeting-4321', 'PIN_TIMEOUT'],
      ['play', 'I did not receive a PIN.', '0'],
      GOODBYE,
      HANGUP,
    ]);
  });

  it('after leaving: silence, goodbye', async () => {
    const t = await run('conference', 'after-leaving-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '4321'],
      ['conference', 'meeting-4321', 'LEFT_CONFERENCE'],
      ['read', AFTER, 'TIMEOUT'],
      GOODBYE,
      HANGUP,
    ]);
  });

  it('after leaving: another key, goodbye', async () => {
    const t = await run('conference', 'after-leaving-other-key.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '4321'],
      ['conference', 'meeting-4321', 'LEFT_CONFERENCE'],
      ['read', AFTER, '9'],
      GOODBYE,
      HANGUP,
    ]);
  });

  it('the open room (simple_conference, no result)', async () => {
    const t = await run('conference', 'open-room.yaml');
    expectSteps(t, [WELCOME, ['read', CHOOSE[0]!, '2'], ...OPEN, GOODBYE, HANGUP]);
    expect(t.commands[3]!.params).toEqual({ id: 'open-room', auto_leave_when_alone: true });
  });

  it('help ("0" handler), then the open room', async () => {
    const t = await run('conference', 'help-then-open-room.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '0'],
      ['play', 'Your meeting number has four digits.', '0'],
      ['read', CHOOSE[0]!, '2'],
      ...OPEN,
      GOODBYE,
      HANGUP,
    ]);
  });

  it('no choice three times', async () => {
    const t = await run('conference', 'menu-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, 'TIMEOUT'],
      ['read', CHOOSE[1]!, 'TIMEOUT'],
      ['read', CHOOSE[1]!, 'TIMEOUT'],
      GOODBYE,
      HANGUP,
    ]);
  });

  it('wrong keys three times', async () => {
    const t = await run('conference', 'menu-wrong-keys.yaml');
    const SORRY: Step = ['play', 'Sorry, that is not one of the choices.', '0'];
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '3'],
      SORRY,
      ['read', CHOOSE[1]!, '4'],
      SORRY,
      ['read', CHOOSE[1]!, '*'],
      SORRY,
      GOODBYE,
      HANGUP,
    ]);
  });

  it('no meeting number three times', async () => {
    const t = await run('conference', 'number-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, 'TIMEOUT'],
      ['read', NUMBER[1]!, 'TIMEOUT'],
      ['read', NUMBER[1]!, 'TIMEOUT'],
      GOODBYE,
      HANGUP,
    ]);
  });

  it('meeting numbers too short three times ("0" is not help here: handlers false)', async () => {
    const t = await run('conference', 'number-too-short.yaml');
    const SHORT: Step = ['play', 'A meeting number has four digits.', '0'];
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '12'],
      SHORT,
      ['read', NUMBER[1]!, '0'],
      SHORT,
      ['read', NUMBER[1]!, '123'],
      SHORT,
      GOODBYE,
      HANGUP,
    ]);
  });

  it('the conference fails: handlers.error plays the apology', async () => {
    const t = await run('conference', 'conference-fails.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '1'],
      ['read', NUMBER[0]!, '7007'],
      ['conference', 'meeting-7007', 'error:CONFERENCE_FAILED'],
      ['play', 'We are sorry, the conference service has a problem.', '0'],
      HANGUP,
    ]);
  });

  it('the open room fails, and so does the apology', async () => {
    const t = await run('conference', 'conference-and-apology-fail.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CHOOSE[0]!, '2'],
      OPEN[0]!,
      ['simple_conference', 'open-room', 'error:CONFERENCE_FAILED'],
      ['play', 'We are sorry, the conference service has a problem.', 'error:MEDIA_NOT_FOUND'],
      HANGUP,
    ]);
  });
});

// ============================================================================================
describe('reminder (outbound)', () => {
  const PATIENT = '+447700900456';
  const OPENING = 'Hello, this is Riverside Dental Practice calling for Mr Smith.';
  const CONFIRM = [
    'This is a reminder of your appointment with Doctor Patel on Thursday 12 June at 10:30 AM.',
    'Press 1 to confirm your appointment',
  ];
  const MACHINE: Step = ['play', 'Hello, this is a message from Riverside Dental Practice for Mr Smith.', '0'];
  const HANGUP: Step = ['hangup', '', ''];
  const out = (file: string) => run('reminder', file, { outbound: PATIENT });

  it('placed with calls.realtime through an app: the patient confirms (registered caller script)', async () => {
    const app = (
      await e.rpc('apps.create', [
        'REALTIME10',
        'reminders',
        { url: `${serve.base}/rt/reminder`, login: RT.login, password: RT.password, data_format: 'JSON' },
      ])
    ).result;
    used.add('reminder/person-confirms.yaml');
    const text = readFileSync(join(CALLERS, 'reminder/person-confirms.yaml'), 'utf8');
    expect(
      (
        await e.req(`/emulator/callers/${PATIENT}`, {
          method: 'PUT',
          body: { caller_text: text, caller_file: 'reminder/person-confirms.yaml' },
        })
      ).status,
    ).toBe(200);
    const r = await e.rpc('calls.realtime', [
      app.hash,
      { number: PATIENT, timeout: 30 },
      { cdr_field: 'appt20250612', cli: '+442079460321' },
    ]);
    expect(r.result).toMatch(HASH);
    await Promise.allSettled([...e.emu.ctx.background]);
    const t = (await e.req(`/emulator/calls/${r.result}`)).json as Transcript;
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '1'],
      ['play', 'Thank you, your appointment on Thursday 12 June is confirmed.', '0'],
      HANGUP,
    ]);
    expect(t).toMatchObject({
      direction: 'outbound',
      request_hash: r.result,
      app: app.hash,
      to: PATIENT,
      from: '+442079460321',
      cdr_field: 'appt20250612',
    });
    expect(t.commands[0]!.params).toEqual({
      media_id: `TTS|TTS_EN-GB_SERENA|${OPENING}`,
      analysistime_ms: 5000,
      min_ms: 300,
      max_ms: 2500,
      silence_ms: 800,
    });
    await e.req(`/emulator/callers/${PATIENT}`, { method: 'DELETE' });
  });

  it('a switchboard (cdr_field ext4417): wait, the extension in DTMF, wait; the patient cancels', async () => {
    const t = await out('switchboard-cancels.yaml');
    expectSteps(t, [
      ['wait', '3', '0'],
      ['send_dtmf', '4417#', '0'],
      ['wait', '8', '0'],
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '2'],
      ['play', 'Your appointment has been cancelled.', '0'],
      HANGUP,
    ]);
    expect(t.cdr_field).toBe('ext4417');
  });

  it('an answering machine: wait_for_silence SILENCE, the message for the machine', async () => {
    const t = await out('machine.yaml');
    expectSteps(t, [['play_talk_detect', OPENING, '0'], ['wait_for_silence', '1500/3/30', 'SILENCE'], MACHINE, HANGUP]);
  });

  it('a machine that never stops: wait_for_silence TIMEOUT, the message anyway', async () => {
    const t = await out('machine-never-silent.yaml');
    expectSteps(t, [['play_talk_detect', OPENING, '0'], ['wait_for_silence', '1500/3/30', 'TIMEOUT'], MACHINE, HANGUP]);
  });

  it('the reception answers (cli = the number called)', async () => {
    const t = await out('reception-answers.yaml');
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '3'],
      ['dialout', '+442079460321', ''],
    ]);
    expect(t.commands[2]!.params).toMatchObject({ cli: PATIENT, cdr_field: 'reminder', ringtone: 'MUSIC' });
    expectEnd(t, 'bridge', { command: 'dialout' });
  });

  it('the reception is busy', async () => {
    const t = await out('reception-busy.yaml');
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '3'],
      ['dialout', '+442079460321', 'NOANSWER'],
      ['play', 'Sorry, our reception is busy.', '0'],
      HANGUP,
    ]);
  });

  it('9 repeats the message; silence three times leaves the machine message', async () => {
    const t = await out('repeat-then-silence.yaml');
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '9'],
      ['read', CONFIRM[0]!, 'TIMEOUT'],
      ['read', CONFIRM[1]!, 'TIMEOUT'],
      ['read', CONFIRM[1]!, 'TIMEOUT'],
      MACHINE,
      HANGUP,
    ]);
  });

  it('wrong keys three times', async () => {
    const t = await out('wrong-keys.yaml');
    const SORRY: Step = ['play', 'Sorry, I did not understand.', '0'];
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '5'],
      SORRY,
      ['read', CONFIRM[1]!, '6'],
      SORRY,
      ['read', CONFIRM[1]!, '7'],
      SORRY,
      MACHINE,
      HANGUP,
    ]);
  });

  it('the opening fails: handlers.error is end', async () => {
    const t = await out('opening-fails.yaml');
    expectSteps(t, [['play_talk_detect', OPENING, 'error:MEDIA_NOT_FOUND'], HANGUP]);
  });

  it('the patient hangs up during the confirmation', async () => {
    const t = await out('hangs-up-on-the-message.yaml');
    expectSteps(t, [
      ['play_talk_detect', OPENING, 'TALK'],
      ['read', CONFIRM[0]!, '1'],
      ['play', 'Thank you, your appointment', ''],
    ]);
    expectEnd(t, 'caller', { command: 'play' });
  });

  it.each([
    ['not-answered.yaml', 'NOANSWER'],
    ['busy.yaml', 'BUSY'],
  ])('%s: one terminal %s request, no command', async (file, status) => {
    const t = await out(file);
    expectSteps(t, []);
    expect(t).toMatchObject({
      ended_by: 'not_answered',
      requests: 1,
      final: { call_status: status, command: '', command_id: 0, http_status: 200 },
    });
  });
});

// ============================================================================================
describe('recording-consent', () => {
  const WELCOME: Step = ['play', 'Welcome to Acme Insurance renewals.', '0'];
  const CONSENT = [
    'To renew your policy by phone, we need to record this call',
    'Press 1 to accept the recording, or 2',
  ];
  const START: Step = ['start_call_recording', 'both en_GB', HASH];
  const TERMS: Step = [
    'play',
    'Your home insurance renews on 1 July 2025. Your new yearly premium is 312.40 pounds',
    '0',
  ];
  const AGREE = ['To agree to the renewal, press 1.', 'Press 1 to agree, 2 to decline'];
  const STOP: Step = ['stop_call_recording', 'Recording has stopped.', HASH];
  const ADVISORS = '+442079460400,+442079460401';
  const NO_CONSENT: Step = ['play', 'No problem, this call will not be recorded.', '0'];
  const CALL_BACK: Step = ['play', 'Sorry, all our advisors are busy.', '0'];
  const HANGUP: Step = ['hangup', '', ''];
  const RECORDED: Step[] = [WELCOME, ['read', CONSENT[0]!, '1'], START, TERMS];

  it('accepts the recording and renews; the same recording hash is returned by stop', async () => {
    const t = await run('recording-consent', 'renews.yaml');
    expectSteps(t, [
      ...RECORDED,
      ['read', AGREE[0]!, '1'],
      STOP,
      ['play', 'Thank you. Your policy is renewed from 1 July.', '0'],
      HANGUP,
    ]);
    expect(t.commands[5]!.result).toBe(t.commands[2]!.result);
    expect(t.commands[2]!.params).toEqual({
      announce: 'TTS|TTS_EN-GB_SERENA|Thank you. This call is now recorded.',
      feeds: 'both',
      locale: 'en_GB',
      transcription: true,
      ner: true,
      pii: true,
      sentiment: false,
    });
  });

  it('declines the renewal', async () => {
    const t = await run('recording-consent', 'declines.yaml');
    expectSteps(t, [
      ...RECORDED,
      ['read', AGREE[0]!, '2'],
      STOP,
      ['play', 'Your policy will not be renewed.', '0'],
      HANGUP,
    ]);
  });

  it('hears the terms again (9); stopping the recording fails (error branch), renewed anyway', async () => {
    const t = await run('recording-consent', 'hears-terms-twice.yaml');
    expectSteps(t, [
      ...RECORDED,
      ['read', AGREE[0]!, '9'],
      TERMS,
      ['read', AGREE[0]!, '1'],
      ['stop_call_recording', 'Recording has stopped.', 'error:NO_RECORDING'],
      ['play', 'Thank you. Your policy is renewed', '0'],
      HANGUP,
    ]);
  });

  it('asks for an advisor during the recorded part (0); the second advisor answers', async () => {
    const t = await run('recording-consent', 'asks-advisor-recorded.yaml');
    expectSteps(t, [...RECORDED, ['read', AGREE[0]!, '0'], ['dialout', ADVISORS, '']]);
    expect(t.commands[5]!.params).toMatchObject({
      whisper: 'TTS|TTS_EN-GB_SERENA|Renewal call, recorded: true.',
      cdr_field: 'renewal',
    });
    expectEnd(t, 'bridge', { command: 'dialout' });
  });

  it('silence at the agreement three times; no advisor; the recording stops silently (announce 0)', async () => {
    const t = await run('recording-consent', 'silent-at-agreement.yaml');
    expectSteps(t, [
      ...RECORDED,
      ['read', AGREE[0]!, 'TIMEOUT'],
      ['read', AGREE[1]!, 'TIMEOUT'],
      ['read', AGREE[1]!, 'TIMEOUT'],
      ['dialout', ADVISORS, 'NOANSWER'],
      ['stop_call_recording', '0', HASH],
      CALL_BACK,
      HANGUP,
    ]);
  });

  it('wrong keys at the agreement; no advisor; stopping silently fails (error branch)', async () => {
    const t = await run('recording-consent', 'wrong-keys-at-agreement.yaml');
    const SORRY: Step = ['play', 'Sorry, that is not one of the choices.', '0'];
    expectSteps(t, [
      ...RECORDED,
      ['read', AGREE[0]!, '5'],
      SORRY,
      ['read', AGREE[1]!, '6'],
      SORRY,
      ['read', AGREE[1]!, '7'],
      SORRY,
      ['dialout', ADVISORS, 'NOANSWER'],
      ['stop_call_recording', '0', 'error:NO_RECORDING'],
      CALL_BACK,
      HANGUP,
    ]);
  });

  it('refuses the recording (2): an advisor, not recorded', async () => {
    const t = await run('recording-consent', 'no-consent.yaml');
    expectSteps(t, [WELCOME, ['read', CONSENT[0]!, '2'], NO_CONSENT, ['dialout', ADVISORS, '']]);
    expect(t.commands[3]!.params).toMatchObject({ whisper: 'TTS|TTS_EN-GB_SERENA|Renewal call, recorded: false.' });
  });

  it('no answer to the consent question three times; no advisor; nothing to stop', async () => {
    const t = await run('recording-consent', 'consent-no-input.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CONSENT[0]!, 'TIMEOUT'],
      ['read', CONSENT[1]!, 'TIMEOUT'],
      ['read', CONSENT[1]!, 'TIMEOUT'],
      NO_CONSENT,
      ['dialout', ADVISORS, 'NOANSWER'],
      CALL_BACK,
      HANGUP,
    ]);
  });

  it('wrong keys to the consent question three times', async () => {
    const t = await run('recording-consent', 'consent-wrong-keys.yaml');
    const PLEASE: Step = ['play', 'Please press 1 or 2.', '0'];
    expectSteps(t, [
      WELCOME,
      ['read', CONSENT[0]!, '3'],
      PLEASE,
      ['read', CONSENT[1]!, '4'],
      PLEASE,
      ['read', CONSENT[1]!, '5'],
      PLEASE,
      NO_CONSENT,
      ['dialout', ADVISORS, ''],
    ]);
  });

  it('the recording cannot start (error branch): an advisor, not recorded', async () => {
    const t = await run('recording-consent', 'recording-fails.yaml');
    expectSteps(t, [
      WELCOME,
      ['read', CONSENT[0]!, '1'],
      ['start_call_recording', 'both en_GB', 'error:RECORDING_UNAVAILABLE'],
      ['play', 'Sorry, the call cannot be recorded at the moment.', '0'],
      ['dialout', ADVISORS, 'NOANSWER'],
      CALL_BACK,
      HANGUP,
    ]);
  });

  it('the terms cannot be played (result 1): an advisor', async () => {
    const t = await run('recording-consent', 'terms-fail.yaml');
    expectSteps(t, [WELCOME, ['read', CONSENT[0]!, '1'], START, [TERMS[0], TERMS[1], '1'], ['dialout', ADVISORS, '']]);
  });

  it('the welcome fails: handlers.error plays the apology', async () => {
    const t = await run('recording-consent', 'welcome-fails-apology.yaml');
    expectSteps(t, [
      [WELCOME[0], WELCOME[1], 'error:MEDIA_NOT_FOUND'],
      ['play', 'We are sorry, something went wrong.', '0'],
      HANGUP,
    ]);
  });

  it('the welcome and the apology fail', async () => {
    const t = await run('recording-consent', 'welcome-fails.yaml');
    expectSteps(t, [
      [WELCOME[0], WELCOME[1], 'error:MEDIA_NOT_FOUND'],
      ['play', 'We are sorry, something went wrong.', 'error:MEDIA_NOT_FOUND'],
      HANGUP,
    ]);
  });
});

// ============================================================================================
describe('through applications and DIDs', () => {
  it('an inbound call to a DID routed to an app: the app URL and its credentials', async () => {
    const app = (
      await e.rpc('apps.create', [
        'REALTIME10',
        'support',
        { url: `${serve.base}/rt/support-line`, login: RT.login, password: RT.password },
      ])
    ).result;
    await e.req('/emulator/dids/+442079460150', { method: 'PUT', body: { app: app.hash } });
    const t = await e.call({ did: '+442079460150', caller: { actions: [{ read: '0' }] } });
    expect(t).toMatchObject({ app: app.hash, to: '+442079460150', url: `${serve.base}/rt/support-line` });
    expectSteps(t, [
      ['play', 'Welcome to Acme Broadband technical support.', '0'],
      ['read', 'If your internet connection is down, press 1.', '0'],
      ['dialout', '+442079460201,+442079460202,+12125550142', ''],
    ]);
  });

  it('an app with the wrong password: callscript answers 401, a violation that ends the call', async () => {
    const app = (
      await e.rpc('apps.create', [
        'REALTIME10',
        'bad',
        { url: `${serve.base}/rt/front-desk`, login: RT.login, password: 'wrong' },
      ])
    ).result;
    const t = await e.call({ app: app.hash });
    expect(t.violations).toEqual([
      {
        request: 1,
        code: 'HTTP_STATUS',
        field: 'status',
        message: expect.stringMatching(/^HTTP 401: a reply must be HTTP 200; body: .*AUTH_REQUIRED/),
      },
    ]);
    expect(t.ended_by).toBe('emulator');
  });

  it('the default caller through a URL: presses 1, first success outcomes', async () => {
    const t = await e.call({ url: `${serve.base}/rt/conference`, auth: RT });
    expect(t.caller).toBe('default caller');
    expectSteps(t, [
      ['play', 'Welcome to the Acme conference service.', '0'],
      ['read', 'To join a meeting with a meeting number, press 1.', '1'],
      ['read', 'Please enter your four digit meeting number.', 'TIMEOUT'],
      ['read', 'Please enter the four digits', 'TIMEOUT'],
      ['read', 'Please enter the four digits', 'TIMEOUT'],
      ['play', 'Thank you for using the Acme conference service. Goodbye.', '0'],
      ['hangup', '', ''],
    ]);
  });
});

it('every caller script of test/fixtures/callers ran', () => {
  const all = readdirSync(CALLERS).flatMap((d) => readdirSync(join(CALLERS, d)).map((f) => `${d}/${f}`));
  expect(all.filter((f) => !used.has(f))).toEqual([]);
  expect(all.length).toBeGreaterThan(80);
});
