/**
 * SMS in call transcripts (#14 item 14): an SMS the customer server sends while it answers
 * one of the call's requests shows in that call's transcript. callscript's sms steps name
 * the call (the x-callscript-callid header); another server's SMS is tied to the call only
 * when that call alone was being answered then.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cmd, fakeServer, startEmulator, type Running } from './helpers.js';
import { formatTranscript } from '../../src/emulator/driver/format.js';

const SMS = { from: 'Acme', to: '+33612345678', body: 'Your code is 1234.' };
let e: Running | undefined;
let fake: Awaited<ReturnType<typeof fakeServer>> | undefined;
afterEach(async () => {
  await fake?.close();
  await e?.close();
  e = fake = undefined;
});

/**
 * A customer server that sends an SMS while answering each call's second request (with `headers`), then plays and hangs
 * up.
 */
async function sendingServer(emu: Running, headers: (callid: string) => Record<string, string>) {
  return fakeServer((r, _n) => {
    const id = Number(r.json.command_id);
    if (id === 1) {
      void emu.req('/rest/v1.1/sms', { body: SMS, headers: headers(String(r.json.callid)) });
      return { body: cmd('hangup', 2), delayMs: 300 };
    }
    if (id === 0) return { body: cmd('play', 1, { media_id: 'TTS|TTS_EN-GB_SERENA|Hello' }) };
    return { body: cmd('hangup', id + 1) };
  });
}

describe('SMS in call transcripts', () => {
  it('the call named by the x-callscript-callid header gets the SMS, at the request being answered', async () => {
    e = await startEmulator();
    fake = await sendingServer(e, (callid) => ({ 'x-callscript-callid': callid }));
    const t = await e.call({ url: fake.url });
    expect(t.sms).toEqual([
      {
        request: 2,
        hash: expect.stringMatching(/^[A-Z0-9]{8}$/),
        from: 'Acme',
        to: '+33612345678',
        text: 'Your code is 1234.',
        encoding: 'GSM',
        parts: 1,
        matched_by: 'header',
      },
    ]);
    const text = formatTranscript(t);
    expect(text).toContain(
      `     sms ${t.sms[0]!.hash}  Acme -> +33612345678  1 part GSM  (sent while answering request 2)\n      ` +
        ` "Your code is 1234."`,
    );
  });

  it('without the header, by timing: tied to the only call being answered, to none when two are', async () => {
    e = await startEmulator();
    fake = await sendingServer(e, () => ({}));
    const one = await e.call({ url: fake.url });
    expect(one.sms.map((s) => [s.request, s.matched_by])).toEqual([[2, 'timing']]);
    // two calls answered at the same time: each server SMS could be either call's, so neither gets it
    const [a, b] = await Promise.all([e.call({ url: fake.url }), e.call({ url: fake.url })]);
    expect([a.sms, b.sms]).toEqual([[], []]);
  });
});
