import { describe, expect, it } from 'vitest';
import { frozenParams, serializeReply, writeParams } from '../../src/engine/serialize.js';

describe('serializeReply', () => {
  it('writes command, command_id, params, variables in this order', () => {
    expect(
      serializeReply({
        command: 'play',
        command_id: 3,
        params: { media_id: 'TTS|V|a "quoted" \\ text\n' },
        variablesRaw: '{}',
      }),
    ).toBe(
      '{"command":"play","command_id":3,"params":{"media_id":"TTS|V|a \\"quoted\\" \\\\ text\\n"},"variables":{}}',
    );
  });

  it('always writes params as an object, even empty; variables default to {}', () => {
    expect(serializeReply({ command: 'hangup', command_id: 1, params: {}, variablesRaw: '' })).toBe(
      '{"command":"hangup","command_id":1,"params":{},"variables":{}}',
    );
  });

  it('writes bigints as bare integers, digit for digit, nested too', () => {
    const params = {
      callid: 18446744073709551615n,
      list: [9007199254740993n, { x: 1n, s: 'y' }],
      b: true,
      n: null,
      f: 1.5,
    };
    expect(writeParams(params)).toBe(
      '{"callid":18446744073709551615,"list":[9007199254740993,{"x":1,"s":"y"}],"b":true,"n":null,"f":1.5}',
    );
    const json = serializeReply({
      command: 'hangup_callid',
      command_id: 9,
      params: { callid: 9007199254740993n },
      variablesRaw: '{"big":123456789012345678901234567890}',
    });
    expect(json).toBe(
      '{"command":"hangup_callid","command_id":9,"params":{"callid":9007199254740993},' +
        '"variables":{"big":123456789012345678901234567890}}',
    );
  });

  it('writes the variables text verbatim', () => {
    const raw = '{ "a" : [1, 2.50, "\\u00e9"] ,"b":{}}';
    expect(serializeReply({ command: 'wait', command_id: 2, params: { wait: 5 }, variablesRaw: raw })).toBe(
      `{"command":"wait","command_id":2,"params":{"wait":5},"variables":${raw}}`,
    );
  });

  it('uses the JSON text attached to frozen constant params', () => {
    const p = frozenParams({ media_id: '1234', max_digits: 4 });
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.keys(p)).toEqual(['media_id', 'max_digits']);
    expect(serializeReply({ command: 'read', command_id: 1, params: p, variablesRaw: '{}' })).toBe(
      '{"command":"read","command_id":1,"params":{"media_id":"1234","max_digits":4},"variables":{}}',
    );
  });
});
