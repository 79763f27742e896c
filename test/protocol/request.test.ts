import { describe, expect, it } from 'vitest';
import { parseRtRequest, RT_REQUEST_FIELDS } from '../../src/protocol/request.js';
import { rtBody, rtFields } from '../helpers/rt.js';

describe('parseRtRequest', () => {
  it('reads a first request with every field', () => {
    const r = parseRtRequest(rtBody());
    expect(r).toEqual({
      ok: true,
      request: {
        app: 'APP12345',
        callid: '4242',
        request_hash: null,
        cli_name: 'Ada',
        cli_number: '+33612345678',
        date_started: '2026-11-22 10:00:00',
        number: '+33123456789',
        command: '',
        command_id: 0,
        command_result: '',
        command_error: '',
        call_status: 'UP',
        cdr_field: '',
        variables: {},
        variablesRaw: '{}',
      },
    });
  });

  it.each(['18446744073709551615', '9007199254740993', '9007199254740992', '0'])(
    'keeps callid %s digit for digit',
    (id) => {
      const r = parseRtRequest(rtBody({ callid: id }));
      expect(r.ok && r.request.callid).toBe(id);
    },
  );

  it('keeps big numbers inside variables digit for digit', () => {
    const raw = '{"crm_id":12345678901234567890,"n":1.5,"s":"x","nested":{"a":[1,2]}}';
    const r = parseRtRequest(rtBody({ callid: '18446744073709551615', variables: raw }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // the echo is the canonical text of the same data: keys sorted, every digit kept
    expect(r.request.variablesRaw).toBe('{"crm_id":12345678901234567890,"n":1.5,"nested":{"a":[1,2]},"s":"x"}');
    // a number JS cannot hold exactly reaches templates as its exact digits
    expect(r.request.variables).toEqual({ crm_id: '12345678901234567890', n: 1.5, s: 'x', nested: { a: [1, 2] } });
  });

  it('rejects a callid above 2^64-1, negative, fractional or quoted', () => {
    for (const id of ['18446744073709551616', '-1', '1.5', '"4242"']) {
      const r = parseRtRequest(rtBody({ callid: id }));
      expect(r).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
      expect(!r.ok && r.message).toContain('callid');
    }
  });

  it('reports each missing field by name', () => {
    for (const f of RT_REQUEST_FIELDS) {
      const o = JSON.parse(rtBody()) as Record<string, unknown>;
      delete o[f];
      const r = parseRtRequest(JSON.stringify(o));
      expect(r).toEqual({
        ok: false,
        code: 'BAD_REQUEST',
        message: `missing field ${f}: an RT.Request has all 14 fields`,
      });
    }
  });

  it('rejects mistyped fields with the field named', () => {
    const cases: [string, unknown, string][] = [
      ['app', 12, 'field app must be a string, got number 12'],
      ['command_id', '3', 'field command_id must be a non-negative integer, got "3"'],
      ['command_id', -1, 'field command_id must be a non-negative integer, got number -1'],
      ['variables', [], 'field variables must be a JSON object ({} when empty), got an array'],
      ['variables', null, 'field variables must be a JSON object ({} when empty), got null'],
      ['request_hash', 5, 'field request_hash must be a string or null, got number 5'],
      [
        'call_status',
        'RINGING',
        'field call_status "RINGING" is not one of INCOMING_CALL, UP, HANGUP, NOANSWER, BUSY, CONGESTION, REJECTED',
      ],
    ];
    for (const [field, value, message] of cases) {
      const o = { ...JSON.parse(rtBody()), [field]: value };
      expect(parseRtRequest(JSON.stringify(o))).toEqual({ ok: false, code: 'BAD_REQUEST', message });
    }
  });

  it('rejects bodies that are not JSON objects', () => {
    expect(parseRtRequest('')).toMatchObject({ ok: false, code: 'BAD_JSON' });
    expect(parseRtRequest('{"app":')).toMatchObject({ ok: false, code: 'BAD_JSON' });
    expect(parseRtRequest('[1,2]')).toEqual({
      ok: false,
      code: 'BAD_REQUEST',
      message: 'the body must be a JSON object (an RT.Request)',
    });
    expect(parseRtRequest('null')).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
    expect(parseRtRequest('{"app":"x","n":12345678901234567890')).toMatchObject({ ok: false, code: 'BAD_JSON' });
  });

  it('accepts a string request_hash (outbound calls)', () => {
    const r = parseRtRequest(rtBody({ request_hash: 'ABCD1234' }));
    expect(r.ok && r.request.request_hash).toBe('ABCD1234');
    expect(rtFields().call_status).toBe('UP');
  });
});

describe('parseRtRequest big numbers', () => {
  it('takes a big callid from the text even when variables hold a nested "callid"', () => {
    const raw = '{"callid":5,"other":{"callid":18446744073709551614}}';
    const r = parseRtRequest(rtBody({ callid: '18446744073709551615', variables: raw }));
    expect(r.ok && r.request.callid).toBe('18446744073709551615');
    expect(r.ok && r.request.variablesRaw).toBe(raw);
  });

  it('a nested big "callid" never stands in for the top-level one', () => {
    const raw = '{"callid":18446744073709551614}';
    const r = parseRtRequest(rtBody({ callid: '7', variables: raw }));
    expect(r.ok && r.request.callid).toBe('7');
    expect(r.ok && r.request.variablesRaw).toBe(raw);
  });

  it('a quoted top-level callid is refused even if a nested numeric one exists', () => {
    const r = parseRtRequest(
      rtBody({ callid: '"18446744073709551615"', variables: '{"callid":18446744073709551615}' }),
    );
    expect(r).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
  });
});

describe('variables are echoed as the canonical text of what the engine reads', () => {
  it.each([
    ['{"a": 1.0, "b":"\\u00e9", "c" : [ 1 , {"d":"}"} ] }', '{"a":1,"b":"é","c":[1,{"d":"}"}]}'],
    ['{}', '{}'],
    ['{ }', '{}'],
    ['{"variables":{"nested":true},"s":"a \\" quote"}', '{"s":"a \\" quote","variables":{"nested":true}}'],
    ['{"b":1,"a":2,"10":3,"9":4}', '{"10":3,"9":4,"a":2,"b":1}'],
    ['{"x":"\\/\\b\\f\\n\\r\\t\\u0001\\ud83d\\ude00"}', '{"x":"/\\b\\f\\n\\r\\t\\u0001😀"}'],
  ])('%s', (raw, canonical) => {
    const r = parseRtRequest(rtBody({ variables: raw }));
    expect(r.ok && r.request.variablesRaw).toBe(canonical);
    // the echo read again is the same data and the same text
    const again = parseRtRequest(rtBody({ variables: canonical }));
    expect(again.ok && again.request.variablesRaw).toBe(canonical);
    expect(again.ok && again.request.variables).toEqual(r.ok && r.request.variables);
  });

  it('takes the top-level member, not a nested one', () => {
    const r = parseRtRequest(rtBody({ variables: '{"a":2}' }).replace('"app":', '"x":{"variables":1},"app":'));
    expect(r.ok && r.request.variablesRaw).toBe('{"a":2}');
  });
});

describe('integers are digits only', () => {
  it.each(['1e3', '1.0', '1E3'])('refuses callid %s', (c) => {
    expect(parseRtRequest(rtBody({ callid: c }))).toMatchObject({
      ok: false,
      code: 'BAD_REQUEST',
      message: `field callid must be an unsigned 64-bit integer written with digits only, got ${c}`,
    });
  });
  it('refuses command_id 3.0', () => {
    const body = rtBody({ command: 'read', command_id: 3 }).replace('"command_id":3', '"command_id":3.0');
    expect(parseRtRequest(body)).toMatchObject({
      ok: false,
      message: 'field command_id must be a non-negative integer written with digits only, got 3.0',
    });
  });
});

describe('the scan of the body text', () => {
  it('skips strings ending in escaped backslashes or holding escaped quotes and braces', () => {
    const raw = '{"k":"x\\\\","l":"a \\" } { \\\\\\"","m":[1,"]"]}';
    const body = rtBody({ cli_name: 'A \\ "B" }', command_result: '\\', variables: raw });
    const r = parseRtRequest(body);
    expect(r.ok && r.request.variablesRaw).toBe('{"k":"x\\\\","l":"a \\" } { \\\\\\"","m":[1,"]"]}');
    expect(r.ok && r.request.cli_name).toBe('A \\ "B" }');
    expect(r.ok && r.request.command_result).toBe('\\');
  });

  it.each(['999999999999999', '1000000000000000', '9007199254740993', '18446744073709551615'])(
    'reads callid %s (15 to 20 digits) from the text',
    (id) => {
      const r = parseRtRequest(rtBody({ callid: id, cli_number: '+1234567890123' }));
      expect(r.ok && r.request.callid).toBe(id);
    },
  );

  it('a run of 16 digits elsewhere (a string, a variable, command_id) is read losslessly too', () => {
    const inString = parseRtRequest(rtBody({ callid: '18446744073709551615', cdr_field: 'ref 12345678901234567' }));
    expect(inString.ok && [inString.request.callid, inString.request.cdr_field]).toEqual([
      '18446744073709551615',
      'ref 12345678901234567',
    ]);
    const bigId = parseRtRequest(
      // a command_id past 2^53 on purpose: the body must keep its digits
      // eslint-disable-next-line no-loss-of-precision
      rtBody({ callid: '18446744073709551615', command_id: 12345678901234567 }).replace(
        '12345678901234568',
        '12345678901234567',
      ),
    );
    expect(bigId).toEqual({
      ok: false,
      code: 'BAD_REQUEST',
      message: 'field command_id must be a non-negative integer, got number 12345678901234567',
    });
  });
});
