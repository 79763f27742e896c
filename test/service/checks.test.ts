/**
 * The pure parts: an outbound call's body (hostile ones too), the vars a flow starts with,
 * the account and address settings, --vars and durations.
 */
import { describe, expect, it } from 'vitest';
import { checkOutboundRequest, OUTBOUND_LIMITS } from '../../src/service/outbound-request.js';
import { startVars } from '../../src/engine/outbound.js';
import { parseAccount, resolveService } from '../../src/cli/service-settings.js';
import { parseVars } from '../../src/cli/dial.js';
import { parseDuration } from '../../src/cli/duration.js';
import { checkConfig } from '../../src/config/check.js';
import { resolveSettings } from '../../src/cli/settings.js';

const ok = { app: 'A1B2C3D4', number: '+33612345678' };
const message = (body: unknown) => {
  const r = checkOutboundRequest(body);
  return r.ok ? 'ok' : r.message;
};

describe('checkOutboundRequest', () => {
  it('takes {app, number} and the optional vars, cdr_field, cli', () => {
    expect(
      checkOutboundRequest({
        ...ok,
        vars: { patient: 'Ms Jones', n: 3, vip: true },
        cdr_field: 'appt42',
        cli: 'BLOCKED',
      }),
    ).toEqual({
      ok: true,
      value: { ...ok, vars: { patient: 'Ms Jones', n: 3, vip: true }, cdr_field: 'appt42', cli: 'BLOCKED' },
    });
    expect(checkOutboundRequest({ ...ok, vars: null, cdr_field: null })).toEqual({ ok: true, value: ok });
  });

  it('refuses what is not an outbound call, naming the field', () => {
    expect(message(null)).toBe('the body must be a JSON object {app, number, vars?, cdr_field?, cli?}');
    expect(message([ok])).toBe('the body must be a JSON object {app, number, vars?, cdr_field?, cli?}');
    expect(message({ ...ok, timeout: 10 })).toBe(
      'unknown field "timeout": an outbound call is {app, number, vars?, cdr_field?, cli?}',
    );
    expect(message({ number: ok.number })).toBe(
      'app: the hash of a REALTIME10 application (letters and digits, e.g. A1B2C3D4) is required, got nothing',
    );
    expect(message({ ...ok, app: '../admin' })).toMatch(/^app: the hash/);
    expect(message({ app: ok.app })).toBe(
      'number: the number to call, E.164 (e.g. +33612345678), is required, got nothing',
    );
    expect(message({ ...ok, number: 33612345678 })).toMatch(/^number: .* got 33612345678$/);
    expect(message({ ...ok, number: '0612345678' })).toMatch(/^number "0612345678" is not E\.164: /);
    expect(message({ ...ok, number: '+33 6 12 34 56 78' })).toMatch(/is not E\.164/);
    expect(message({ ...ok, cdr_field: 'has spaces' })).toMatch(/^cdr_field "has spaces": /);
    expect(message({ ...ok, cli: '+1' })).toMatch(/^cli "\+1": /);
  });

  it(
    'vars are flat, named, bounded: nested, lists, null, too many, too long, too big, reserved names are ' + 'refused',
    () => {
      expect(message({ ...ok, vars: [1] })).toBe(
        'vars must be an object of names to strings, numbers or booleans, got a list',
      );
      expect(message({ ...ok, vars: 'a=1' })).toMatch(/^vars must be an object/);
      expect(message({ ...ok, vars: { a: { b: 1 } } })).toBe(
        'vars.a is an object: vars are flat, each a string, a number or a boolean',
      );
      expect(message({ ...ok, vars: { a: [1, 2] } })).toBe(
        'vars.a is a list: vars are flat, each a string, a number or a boolean',
      );
      expect(message({ ...ok, vars: { a: null } })).toBe(
        'vars.a is null: vars are flat, each a string, a number or a boolean',
      );
      expect(message({ ...ok, vars: { 'a-b': 1 } })).toMatch(/^vars: "a-b" is not a variable name/);
      expect(message({ ...ok, vars: { '1a': 1 } })).toMatch(/is not a variable name/);
      expect(message({ ...ok, vars: JSON.parse('{"__proto__": "x"}') })).toMatch(/"__proto__" is not a variable name/);
      expect(message({ ...ok, vars: { constructor: 'x' } })).toMatch(/"constructor" is not a variable name/);
      expect(message({ ...ok, vars: { ['v'.repeat(65)]: 1 } })).toMatch(/is not a variable name/);
      expect(message({ ...ok, vars: { a: 'x'.repeat(OUTBOUND_LIMITS.valueChars + 1) } })).toBe(
        `vars.a is 1025 characters long, at most 1024`,
      );
      const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`v${i}`, i]));
      expect(message({ ...ok, vars: many })).toBe('vars: 65 variables, at most 64');
      const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`v${i}`, 'x'.repeat(1000)]));
      expect(message({ ...ok, vars: big })).toMatch(/^vars are 100\d\d bytes as JSON, at most 8192$/);
    },
  );
});

describe('startVars: the vars an outbound call starts with', () => {
  const declared = { patient: 'Mr Smith', count: 1, vip: false, note: null, list: [1], map: { a: 1 } };

  it('takes declared vars, made the type of their default; drops the others, saying why', () => {
    const r = startVars(declared, {
      patient: 'Ms Jones',
      count: '3',
      vip: 'true',
      note: 7,
      bogus: 'x',
      list: 'y',
      map: 'z',
    });
    expect(r.vars).toEqual({ patient: 'Ms Jones', count: 3, vip: true, note: 7 });
    expect(r.dropped).toEqual([
      { name: 'bogus', why: "not declared in the flow's vars:" },
      { name: 'list', why: 'declared as a list: outbound vars are strings, numbers and booleans' },
      { name: 'map', why: 'declared as a map: outbound vars are strings, numbers and booleans' },
    ]);
  });

  it('a value that is not of the declared type is dropped; a number given for a string is made a string', () => {
    const r = startVars(declared, { count: 'three', vip: 'yes', patient: 42 });
    expect(r.vars).toEqual({ patient: '42' });
    expect(r.dropped.map((d) => d.why)).toEqual([
      'declared as a number, got "three"',
      'declared as a boolean, got "yes"',
    ]);
  });

  it("the flow's language variable, undeclared, takes one of its languages", () => {
    const language = { variable: 'lang', languages: ['en-GB', 'fr-FR'] };
    expect(startVars(declared, { lang: 'fr-FR' }, language)).toEqual({ vars: { lang: 'fr-FR' }, dropped: [] });
    expect(startVars(declared, { lang: 'de-DE' }, language).dropped).toEqual([
      { name: 'lang', why: "the flow's language variable takes one of its languages (en-GB, fr-FR)" },
    ]);
    expect(startVars(declared, { lang: 'fr-FR' }).dropped).toEqual([
      { name: 'lang', why: "not declared in the flow's vars:" },
    ]);
  });

  it('names of Object.prototype are not declared vars', () => {
    const r = startVars(declared, { toString: 'x', hasOwnProperty: 'y' });
    expect(r.vars).toEqual({});
    expect(r.dropped).toHaveLength(2);
  });
});

describe('service settings', () => {
  it('an account is LOGIN:PASSWORD, the password keeps its colons', () => {
    expect(parseAccount('acme:p:a:ss', '--account')).toEqual({ login: 'acme', password: 'p:a:ss' });
    expect(parseAccount('acme', '--account')).toBe(
      "--account must be LOGIN:PASSWORD (the service account's login, a colon, its password), got no colon",
    );
    expect(parseAccount(':pw', 'CALLSCRIPT_ACCOUNT')).toMatch(
      /^CALLSCRIPT_ACCOUNT must be LOGIN:PASSWORD .* got no login$/,
    );
    expect(parseAccount('acme:', '--account')).toBe('--account must be LOGIN:PASSWORD: the password is empty');
  });

  it('flags win over the environment, which wins over the config file; the CALLR API by default', () => {
    const config = { api: 'http://10.0.0.1:4010', account: { login: 'file', password: 'f' } };
    expect(resolveService({}, {}, undefined)).toEqual({
      url: 'https://api.callr.com/json-rpc/v1.1/',
      urlFrom: 'the default',
    });
    expect(resolveService({}, {}, config)).toEqual({
      url: 'http://10.0.0.1:4010/json-rpc/v1.1/',
      urlFrom: 'api: in callscript.yaml',
      account: { login: 'file', password: 'f' },
      accountFrom: 'account: in callscript.yaml',
    });
    expect(
      resolveService({}, { CALLSCRIPT_API: 'http://127.0.0.1:4010', CALLSCRIPT_ACCOUNT: 'env:e:e' }, config),
    ).toEqual({
      url: 'http://127.0.0.1:4010/json-rpc/v1.1/',
      urlFrom: 'CALLSCRIPT_API',
      account: { login: 'env', password: 'e:e' },
      accountFrom: 'CALLSCRIPT_ACCOUNT',
    });
    expect(
      resolveService(
        { api: 'http://127.0.0.1:9', account: 'flag:x' },
        { CALLSCRIPT_API: 'http://127.0.0.1:4010', CALLSCRIPT_ACCOUNT: 'env:e' },
        config,
      ),
    ).toMatchObject({ urlFrom: '--api', account: { login: 'flag', password: 'x' }, accountFrom: '--account' });
    expect(resolveService({ api: 'nope' }, {}, undefined)).toMatch(/^--api: "nope" is not a URL/);
    expect(resolveService({ account: 'nocolon' }, {}, undefined)).toMatch(/^--account must be LOGIN:PASSWORD/);
  });
});

describe('--vars and durations', () => {
  it('--vars are name=value pairs, the value after the first "="', () => {
    expect(parseVars(['patient=Ms Jones', 'expr=a=b', 'empty='])).toEqual({
      patient: 'Ms Jones',
      expr: 'a=b',
      empty: '',
    });
    expect(parseVars(['novalue'])).toBe('--vars takes name=value pairs, not "novalue"');
    expect(parseVars(['=x'])).toBe('--vars takes name=value pairs, not "=x"');
    expect(parseVars(['a=1', 'a=2'])).toBe('--vars: a is given twice');
    expect(Object.getPrototypeOf(parseVars(['__proto__=x']))).toBe(Object.prototype);
  });

  it('durations: 120s, 2m, 500ms, 1h, a number of seconds; bounded', () => {
    const b = { minMs: 100, maxMs: 3_600_000 };
    expect([
      parseDuration('120s', 't', b),
      parseDuration('2m', 't', b),
      parseDuration('500ms', 't', b),
      parseDuration('1h', 't', b),
      parseDuration('1.5', 't', b),
    ]).toEqual([120_000, 120_000, 500, 3_600_000, 1500]);
    expect(parseDuration('2h', '--timeout', b)).toBe(
      '--timeout must be a duration from 100ms to 1h (e.g. 90s, 2m, 500ms; a number is seconds), not "2h"',
    );
    expect(parseDuration('soon', '--timeout', b)).toMatch(/not "soon"$/);
  });
});

describe("api: and account: in callscript.yaml, and the server's settings", () => {
  const codes = (text: string) =>
    checkConfig(text, 'callscript.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);

  it('takes an address and an account; refuses what is not one, with positions', () => {
    const ok = checkConfig(
      'api: http://127.0.0.1:4010\naccount:\n  login: acme\n  password: "p:ss"\n',
      'callscript.yaml',
    );
    expect(ok.diagnostics).toEqual([]);
    expect(ok.config).toMatchObject({ api: 'http://127.0.0.1:4010', account: { login: 'acme', password: 'p:ss' } });
    expect(codes('api: api.callr.com\n')).toEqual([
      "1:6 BAD_FORMAT api must be an http:// or https:// URL, got 'api.callr.com'",
    ]);
    expect(codes('account:\n  login: acme\n')).toEqual([
      '1:1 CONFIG_AUTH account needs both login and password (password is missing)',
    ]);
    expect(codes('account:\n')).toEqual(['1:1 CONFIG_AUTH account is empty: give login and password, or remove it']);
    expect(codes('account:\n  login: "a:b"\n  password: x\n')).toEqual([
      '2:10 BAD_FORMAT account.login: an HTTP Basic login has no ":" (the password may)',
    ]);
    expect(codes('account:\n  login: a\n  password: x\n  token: y\n')[0]).toMatch(
      /UNKNOWN_KEY account: unknown key 'token'/,
    );
  });

  it("serve places outbound calls with CALLSCRIPT_ACCOUNT / CALLSCRIPT_API, else the file's", async () => {
    const r = await resolveSettings(
      { flows: 'flows' },
      { CALLSCRIPT_ACCOUNT: 'acme:p:ss', CALLSCRIPT_API: 'http://127.0.0.1:4010', CALLSCRIPT_CONFIG: '' },
      '/nonexistent',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.settings.service).toEqual({
      url: 'http://127.0.0.1:4010/json-rpc/v1.1/',
      login: 'acme',
      from: 'CALLSCRIPT_ACCOUNT',
    });
    expect(r.settings.server.service).toEqual({
      url: 'http://127.0.0.1:4010/json-rpc/v1.1/',
      login: 'acme',
      password: 'p:ss',
    });
    const none = await resolveSettings({ flows: 'flows' }, { CALLSCRIPT_CONFIG: '' }, '/nonexistent');
    expect(none.ok && none.settings.server.service).toBeUndefined();
    const bad = await resolveSettings(
      { flows: 'flows' },
      { CALLSCRIPT_ACCOUNT: 'nocolon', CALLSCRIPT_CONFIG: '' },
      '/nonexistent',
    );
    expect(bad).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^CALLSCRIPT_ACCOUNT must be LOGIN:PASSWORD/),
    });
  });
});
