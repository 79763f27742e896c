/**
 * A terminal request that carries the result of the command it interrupted (protocol-notes.md: "carrying the
 * interrupted command's command/command_id (and its result or error, if any)"): the step's `save:` keeps it before
 * the hangup handler runs (issue 22 item 7: the voicemail of a caller who hangs up while recording).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/advance.js';
import { Call, OPTS } from './helpers.js';
import { yamlFlow } from './yaml.js';

const summaryOf = (o: Outcome | undefined) => (o?.kind === 'reply' ? o.summary : undefined);
const codes = (o: Outcome | undefined) => (o?.kind === 'reply' ? (o.log ?? []).map((l) => l.code) : []);

const BOX = `
version: 1
name: box
start: rec
handlers: { hangup: filed }
steps:
  rec:
    record: { max_duration: 60 }
    save: message
    next: pin
  pin:
    read: { prompt: "Your PIN?", max_digits: 4 }
    save: pin
    on:
      "0000": bye
      "/^[0-9]{4}$/": bye
      TIMEOUT: bye
      default: bye
  bye: { hangup: {} }
  filed:
    set:
      got: "{{ vars.message | default: 'nothing' }}"
      pin_seen: { expr: "has(vars.pin) ? vars.pin : 'none'" }
`;

describe('a terminal request carrying the interrupted command result', () => {
  it('HANGUP during record with the file name: save: is applied, then the hangup handler runs', async () => {
    const c = new Call(await yamlFlow(BOX));
    c.start();
    c.result('', { call_status: 'HANGUP', command_result: 'msg-0001.wav' });
    expect(c.state).toBeUndefined();
    expect(summaryOf(c.last)?.vars).toEqual({ message: 'msg-0001.wav', got: 'msg-0001.wav', pin_seen: 'none' });
  });

  it('no result, an error, another command or command_id, or the flow already hung up: nothing is saved', async () => {
    const f = await yamlFlow(BOX);
    const nothing = { got: 'nothing', pin_seen: 'none' };
    const tries: Record<string, string | number>[] = [
      { command_result: '' },
      { command_result: '', command_error: 'FAILED' },
      { command_result: 'msg.wav', command: 'play' },
      { command_result: 'msg.wav', command_id: 0 },
    ];
    for (const t of tries) {
      const c = new Call(f);
      c.start();
      c.send(c.next({ call_status: 'HANGUP', ...t }));
      expect(summaryOf(c.last)?.vars, JSON.stringify(t)).toEqual(nothing);
    }
    const done = new Call(f);
    done.start();
    done.result('msg.wav');
    done.result('0000');
    expect(done.state?.done).toBe(true);
    done.result('1234', { call_status: 'HANGUP' });
    expect(summaryOf(done.last)?.vars).toEqual({ message: 'msg.wav', pin: '0000', got: 'msg.wav', pin_seen: '0000' });
  });

  it('a read: keys and TIMEOUT are results; text that read never returns is not', async () => {
    const f = await yamlFlow(BOX);
    for (const [result, pin] of [
      ['12', '12'],
      ['TIMEOUT', 'TIMEOUT'],
      ['12#', 'none'],
      ['HANGUP', 'none'],
      ['1'.repeat(21), 'none'],
    ]) {
      const c = new Call(f);
      c.start();
      c.result('m.wav');
      c.result(result!, { call_status: 'NOANSWER' });
      expect(summaryOf(c.last)?.vars.pin_seen, result).toBe(pin);
    }
  });

  it("valid: rejects a result it would reject live; the step's exact keys and TIMEOUT are exempt", async () => {
    const f = await yamlFlow(`
version: 2
name: v
start: ask
handlers: { hangup: filed }
steps:
  ask:
    read: { prompt: "Account?", max_digits: 6 }
    save: account
    valid: { when: "result.size() == 6", else: bye }
    on:
      "0": bye
      default: bye
  bye: { hangup: {} }
  filed:
    set: { seen: { expr: "has(vars.account) ? vars.account : 'none'" } }
`);
    for (const [result, seen] of [
      ['123456', '123456'],
      ['123', 'none'],
      ['0', '0'],
      ['TIMEOUT', 'TIMEOUT'],
    ]) {
      const c = new Call(f);
      c.start();
      c.result(result!, { call_status: 'HANGUP' });
      expect(summaryOf(c.last)?.vars.seen, result).toBe(seen);
    }
  });

  it('with no hangup handler, the call summary still has the saved result', async () => {
    const c = new Call(
      await yamlFlow(`
version: 1
name: plain
start: rec
steps:
  rec:
    record: {}
    save: message
    next: bye
  bye: { hangup: {} }
`),
    );
    c.start();
    c.result('m-7.wav', { call_status: 'HANGUP' });
    expect(summaryOf(c.last)?.vars).toEqual({ message: 'm-7.wav' });
  });

  it('hostile: a result over the call state cap is not saved (logged), the handler still runs', async () => {
    const c = new Call(await yamlFlow(BOX), { ...OPTS, maxStateBytes: 1024 });
    c.start();
    c.result('x'.repeat(5000), { call_status: 'HANGUP' });
    expect(summaryOf(c.last)?.vars).toEqual({ got: 'nothing', pin_seen: 'none' });
    expect(codes(c.last)).toEqual(['STATE_TOO_LARGE']);
  });

  it('the shipped voicemail flow texts the owner when the caller hangs up while recording', async () => {
    const c = new Call(await yamlFlow(readFileSync('flows/voicemail.yaml', 'utf8'), 'flows/voicemail.yaml'));
    c.start(); // greeting
    c.result('0'); // tone
    c.result('0'); // record
    c.result('', { call_status: 'HANGUP', command_result: 'msg-0042.wav' });
    expect(c.effects.map((e) => [e.kind, e.step])).toEqual([['sms', 'text_owner']]);
    expect(summaryOf(c.last)?.vars).toMatchObject({ message: 'msg-0042.wav', voicemail_file: 'msg-0042.wav' });
  });
});
