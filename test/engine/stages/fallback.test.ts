/** The deadline fallback (src/engine/fallback.ts): its reply, its note, and the request it stands for. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fallbackNote, fallbackReply, substitute } from '../../../src/engine/fallback.js';
import { Sealer } from '../../../src/engine/seal.js';
import { req } from '../helpers.js';

const read = req({ callid: '9', command: 'read', command_id: 3, command_result: '1234', variablesRaw: '{"a":1}' });

describe('fallbackReply', () => {
  it("echoes the request's command_id: a 1-second wait, or the configured media", () => {
    expect(fallbackReply(read, undefined)).toBe(
      '{"command":"wait","command_id":3,"params":{"wait":1},"variables":{"a":1}}',
    );
    expect(fallbackReply(read, 'TTS|TTS_EN-GB_SERENA|Hold on.')).toBe(
      '{"command":"play","command_id":3,"params":{"media_id":"TTS|TTS_EN-GB_SERENA|Hold on."},"variables":{"a":1}}',
    );
  });
});

describe('substitute', () => {
  const note = fallbackNote(read, undefined, undefined);

  it('takes the report of the fallback done as the request it replaced, with the new variables', () => {
    const done = req({ callid: '9', command: 'wait', command_id: 3, command_result: '0', variablesRaw: '{"b":2}' });
    expect(substitute(done, note, undefined)).toEqual({
      ...done,
      command: 'read',
      command_id: 3,
      command_result: '1234',
      command_error: '',
      call_status: 'UP',
    });
  });

  it('keeps the status of a report that ends the call (the caller hung up during the fallback)', () => {
    for (const status of ['HANGUP', 'NOANSWER'] as const) {
      const done = req({ callid: '9', command: 'wait', command_id: 3, command_result: '0', call_status: status });
      expect(substitute(done, note, undefined)).toMatchObject({
        command: 'read',
        command_id: 3,
        command_result: '1234',
        call_status: status,
      });
    }
  });

  it('leaves any other request as it is: another command, another id, an error, a note that is not one', () => {
    const other = [
      req({ callid: '9', command: 'play', command_id: 3 }),
      req({ callid: '9', command: 'wait', command_id: 4 }),
      req({ callid: '9', command: 'wait', command_id: 3, command_error: 'FAILED' }),
    ];
    for (const r of other) expect(substitute(r, note, undefined)).toBe(r);
    const done = req({ callid: '9', command: 'wait', command_id: 3 });
    expect(substitute(done, '{broken', undefined)).toBe(done);
  });

  it('keeps the replaced result sealed in the note when a key is set; another key cannot open it', () => {
    const sealer = new Sealer([randomBytes(32)]);
    const sealed = fallbackNote(read, 'media', sealer);
    expect(sealed).not.toContain('1234');
    const done = req({ callid: '9', command: 'play', command_id: 3, command_result: '0' });
    expect(substitute(done, sealed, sealer).command_result).toBe('1234');
    expect(substitute(done, sealed, new Sealer([randomBytes(32)]))).toBe(done);
    expect(substitute(done, sealed, undefined)).toBe(done);
  });
});
