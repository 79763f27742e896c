import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';

const at = (text: string) =>
  checkConfig(text, 'callscript.yaml').diagnostics.map((d) => `${d.code}@${d.line}:${d.column}`);

describe('checkConfig', () => {
  it('an empty file (or only comments) is all defaults', () => {
    for (const t of ['', '# nothing\n', 'server:\n']) {
      const r = checkConfig(t, 'callscript.yaml');
      expect(r.diagnostics).toEqual([]);
      expect(r.config).toStrictEqual(CONFIG_DEFAULTS);
    }
    expect(CONFIG_DEFAULTS.server).toStrictEqual({
      port: 3000,
      host: '127.0.0.1',
      flows_dir: 'flows',
      deadline_ms: 4000,
      body_limit: 65536,
      body_depth: 32,
      call_ttl_s: 7200,
      ended_call_ttl_s: 600,
      reload_settle_ms: 1000,
      log_level: 'info',
      workers: 1,
      watch: true,
      headers_timeout_ms: 10000,
      request_timeout_ms: 10000,
      keep_alive_timeout_ms: 5000,
      socket_timeout_ms: 30000,
      max_connections: 900,
      auth_failure_limit: 10,
      auth_failure_window_s: 60,
    });
    expect(CONFIG_DEFAULTS.limits).toStrictEqual({
      call_state_bytes: 32768,
      expression_cost: 100000,
      template_memory: 50000,
      template_ms: 50,
      flow_file_bytes: 2097152,
      max_live_calls: 50000,
    });
  });

  it('applies the file over the defaults', () => {
    const r = checkConfig(
      [
        'server: { port: 8080, deadline_ms: 2500, log_level: debug, ended_call_ttl_s: 60, reload_settle_ms: 3000 }',
        'limits: { call_state_bytes: 4096, expression_cost: 5000, flow_file_bytes: 4194304 }',
        'auth: { login: me, password: secret }',
        'unknown_call: reject',
        'fallback: "One moment please."',
        'routes:',
        '  apps: { A1B2C3D4: front-desk }',
        '  numbers: { "+33123456789": support-line, +442079460000: uk }',
        '  default: front-desk',
      ].join('\n'),
      'callscript.yaml',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.config).toStrictEqual({
      server: {
        ...CONFIG_DEFAULTS.server,
        port: 8080,
        deadline_ms: 2500,
        log_level: 'debug',
        ended_call_ttl_s: 60,
        reload_settle_ms: 3000,
      },
      limits: {
        call_state_bytes: 4096,
        expression_cost: 5000,
        template_memory: 50000,
        template_ms: 50,
        flow_file_bytes: 4194304,
        max_live_calls: 50000,
      },
      auth: { login: 'me', password: 'secret' },
      unknown_call: 'reject',
      fallback: { kind: 'tts', voice: 'TTS_EN-GB_SERENA', text: 'One moment please.' },
      routes: {
        apps: { A1B2C3D4: 'front-desk' },
        numbers: { '+33123456789': 'support-line', '+442079460000': 'uk' },
        default: 'front-desk',
      },
    });
  });

  it('server timeouts, connection cap, failed-authentication limit and proxies', () => {
    const r = checkConfig(
      'server:\n  headers_timeout_ms: 2000\n  request_timeout_ms: 3000\n  keep_alive_timeout_ms: 65000\n  ' +
        'socket_timeout_ms: 20000\n  max_connections: 50\n  auth_failure_limit: 0\n  auth_failure_window_s: ' +
        '300\n  trust_proxy: [10.0.0.0/8, "::1", loopback]\n',
      'c.yaml',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.config!.server).toMatchObject({
      headers_timeout_ms: 2000,
      request_timeout_ms: 3000,
      keep_alive_timeout_ms: 65000,
      socket_timeout_ms: 20000,
      max_connections: 50,
      auth_failure_limit: 0,
      auth_failure_window_s: 300,
      trust_proxy: ['10.0.0.0/8', '::1', 'loopback'],
    });
    expect(at('server:\n  max_connections: 0\n  headers_timeout_ms: 50\n')).toEqual([
      'OUT_OF_BOUNDS@2:20',
      'OUT_OF_BOUNDS@3:23',
    ]);
    const late = checkConfig('server:\n  headers_timeout_ms: 20000\n', 'c.yaml');
    expect(late.diagnostics).toMatchObject([
      {
        code: 'OUT_OF_BOUNDS',
        line: 2,
        column: 3,
        message: 'server.headers_timeout_ms (20000) must not be longer than server.request_timeout_ms (10000)',
      },
    ]);
    const proxies = checkConfig('server:\n  trust_proxy: [10.0.0.0/33, nobody, 127.0.0.1]\n', 'c.yaml');
    expect(proxies.diagnostics.map((d) => [d.code, d.line, d.column, d.message])).toEqual([
      [
        'BAD_FORMAT',
        2,
        17,
        "server.trust_proxy: '10.0.0.0/33' is not an IP address, a CIDR range, or loopback, linklocal, uniquelocal",
      ],
      [
        'BAD_FORMAT',
        2,
        30,
        "server.trust_proxy: 'nobody' is not an IP address, a CIDR range, or loopback, linklocal, uniquelocal",
      ],
    ]);
  });

  it('fallback: a media id, TTS|voice|text or { say, voice }', () => {
    expect(checkConfig('fallback: 1234', 'c.yaml').config!.fallback).toStrictEqual({ kind: 'id', id: 1234 });
    expect(checkConfig('fallback: "TTS|TTS_EN-GB_DANIEL|Hold on"', 'c.yaml').config!.fallback).toStrictEqual({
      kind: 'tts',
      voice: 'TTS_EN-GB_DANIEL',
      text: 'Hold on',
    });
    expect(checkConfig('fallback: { say: Hold on, voice: TTS_FR-FR_AUDREY }', 'c.yaml').config!.fallback).toStrictEqual(
      { kind: 'tts', voice: 'TTS_FR-FR_AUDREY', text: 'Hold on' },
    );
  });

  it('reports unknown keys with did-you-mean, at the key', () => {
    const r = checkConfig('server:\n  prot: 80\n', 'callscript.yaml');
    expect(r.config).toBeUndefined();
    expect(r.diagnostics).toMatchObject([
      { code: 'UNKNOWN_KEY', line: 2, column: 3, message: "server: unknown key 'prot'", hint: "did you mean 'port'?" },
    ]);
    expect(at('rotues: {}\n')).toEqual(['UNKNOWN_KEY@1:1']);
  });

  it('reports types, bounds and enums at the value', () => {
    expect(at('server:\n  port: 99999\n  deadline_ms: "4000"\n  log_level: verbose\n')).toEqual([
      'OUT_OF_BOUNDS@2:9',
      'TYPE_MISMATCH@3:16',
      'BAD_ENUM@4:14',
    ]);
    expect(at('server:\n  deadline_ms: 5000\n')).toEqual(['OUT_OF_BOUNDS@2:16']);
    expect(at('server:\n  body_limit: 100\n  call_ttl_s: 10\n')).toEqual(['OUT_OF_BOUNDS@2:15', 'OUT_OF_BOUNDS@3:15']);
    expect(at('server:\n  ended_call_ttl_s: 5\n  reload_settle_ms: 60001\nlimits:\n  call_state_bytes: 100\n')).toEqual(
      ['OUT_OF_BOUNDS@2:21', 'OUT_OF_BOUNDS@3:21', 'OUT_OF_BOUNDS@5:21'],
    );
    expect(
      at('limits:\n  expression_cost: 999\n  template_memory: 10000001\n  template_ms: 0\n  flow_file_bytes: 100\n'),
    ).toEqual(['OUT_OF_BOUNDS@2:20', 'OUT_OF_BOUNDS@3:20', 'OUT_OF_BOUNDS@4:16', 'OUT_OF_BOUNDS@5:20']);
    expect(at('unknown_call: restrat\n')).toEqual(['BAD_ENUM@1:15']);
    expect(checkConfig('unknown_call: restrat\n', 'c.yaml').diagnostics[0]!.hint).toBe("did you mean 'restart'?");
    expect(at('server: 3000\n')).toEqual(['TYPE_MISMATCH@1:9']);
  });

  it('checks E.164 route keys and flow names', () => {
    expect(at('routes:\n  numbers:\n    "0123456789": a\n    "+33999": b\n    "+33123456789": "not a name"\n')).toEqual(
      ['BAD_FORMAT@3:5', 'BAD_FORMAT@4:5', 'BAD_NAME@5:21'],
    );
  });

  it('needs login and password together', () => {
    expect(at('auth: { password: x }\n')).toEqual(['CONFIG_AUTH@1:1']);
    expect(at('auth:\n')).toEqual(['CONFIG_AUTH@1:1']);
    expect(at('auth: { login: "", password: x }\n')).toEqual(['TYPE_MISMATCH@1:16']);
  });

  it('refuses templates and lists as fallback', () => {
    expect(at('fallback: "{{ vars.x }}"\n')).toEqual(['BAD_MEDIA@1:11']);
    expect(at('fallback: [1, 2]\n')).toEqual(['BAD_MEDIA@1:11']);
  });

  it('shares the YAML diagnostics of flows', () => {
    expect(at('server: { port: 1\n')).toEqual(['YAML_SYNTAX@2:1']);
    expect(at('server: {}\nserver: {}\n')).toEqual(['DUPLICATE_KEY@2:1']);
    expect(at('- a\n')).toEqual(['NOT_A_MAP@1:1']);
  });

  it("reports a string that does not match its pattern with the option's own message", () => {
    const m = (t: string) =>
      checkConfig(t, 'c.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);
    expect(m('environment: "pro duction"\n')).toEqual([
      "1:14 BAD_NAME environment must be an environment name (letters, digits, - and _; 64 at most), got 'pro duction'",
    ]);
    expect(m('http:\n  allow_hosts: ["a b"]\n')).toEqual([
      '2:17 BAD_FORMAT http.allow_hosts.0 must be a host name (api.bank.example) or *. and a domain ' +
        "(*.bank.example), got 'a b'",
    ]);
    expect(m('store:\n  cluster: [redis://a:7000, x]\n')).toEqual([
      "2:29 BAD_FORMAT store.cluster.1 must be a Redis URL, got 'x'",
    ]);
    expect(m('store: mysql://x\n')).toEqual(["1:8 BAD_FORMAT store must be memory or a Redis URL, got 'mysql://x'"]);
    expect(m('routes:\n  default: "no name"\n')).toEqual([
      "2:12 BAD_NAME routes.default: 'no name' is not a flow name (letters, digits, - and _)",
    ]);
  });

  it('a sentinel needs its host and port', () => {
    expect(
      checkConfig('store:\n  sentinels: [{ host: s1 }]\n  name: m\n', 'c.yaml').diagnostics.map(
        (d) => `${d.line}:${d.column} ${d.code} ${d.message}`,
      ),
    ).toEqual(["2:15 MISSING_KEY store.sentinels.0 needs 'port'"]);
  });

  it('one diagnostic for a timeout out of its bounds, not a second one for its order with the other', () => {
    expect(at('server:\n  headers_timeout_ms: 120001\n')).toEqual(['OUT_OF_BOUNDS@2:23']);
    expect(at('server:\n  request_timeout_ms: 50\n')).toEqual(['OUT_OF_BOUNDS@2:23']);
    expect(at('server:\n  headers_timeout_ms: 12000\n')).toEqual(['OUT_OF_BOUNDS@2:3']);
  });
});
