/**
 * Environment values read from the server's environment (issue 22 item 5): `{ from_env: NAME, default: "..." }` in
 * `environments:`, read when the call runs as secrets are, and a value naming a variable `secrets:` declares is a
 * secret (http requests only, masked).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { flowJsonSchema } from '../../src/flow/schema.js';
import { checkFlow } from '../../src/flow/check.js';
import { unsetServerVariables } from '../../src/flow/check-environments.js';
import { parseScenario, runCase } from '../../src/testing/index.js';
import { advance } from '../../src/engine/advance.js';
import { Call, OPTS, reply, req, tts } from './helpers.js';
import { yamlFlow } from './yaml.js';
import { load } from '../subflow/helpers.js';

const DESK = `version: 2
name: desk
environments:
  local:
    api: { from_env: DESK_API_URL, default: "http://127.0.0.1:4020" }
    support: "+442079460000"
  production:
    api: "https://api.example"
    support: { from_env: DESK_SUPPORT }
start: hello
steps:
  hello: { say: "Status from {{ env.api }}, support {{ env.support }}.", next: look }
  look:
    http: { url: "{{ env.api }}/v1/status" }
    on: { ok: end, default: end, error: end }
  end: { hangup: {} }
`;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('from_env: a value of the server environment', () => {
  it('is read when the call runs, its default when the variable is not set', async () => {
    const flow = await yamlFlow(DESK, 'desk.yaml');
    const with_ = (environ: Record<string, string>) => {
      const out = advance(flow, undefined, req(), { ...OPTS, environ: (n) => environ[n] });
      return out.kind === 'reply' ? out.replyJson : out.kind;
    };
    expect(with_({ DESK_API_URL: 'http://10.0.0.5:8080' })).toBe(
      reply('play', 1, { media_id: tts('Status from http://10.0.0.5:8080, support +442079460000.') }),
    );
    expect(with_({})).toBe(
      reply('play', 1, { media_id: tts('Status from http://127.0.0.1:4020, support +442079460000.') }),
    );
  });

  it('the server reads it with its secrets reader when it gives no other', async () => {
    const flow = await yamlFlow(DESK, 'desk.yaml');
    const out = advance(flow, undefined, req(), { ...OPTS, secret: (n) => `<${n}>` });
    expect(out.kind === 'reply' && out.replyJson).toBe(
      reply('play', 1, { media_id: tts('Status from <DESK_API_URL>, support +442079460000.') }),
    );
  });

  it('in a scenario, the tools read their own environment (the http step sees it too)', async () => {
    vi.stubEnv('DESK_API_URL', 'http://mock.example:4020');
    const text = [
      'flow: desk',
      'cases:',
      '  - name: x',
      '    steps:',
      '      - expect: play',
      '      - expect: { http: { method: GET, url: "http://mock.example:4020/v1/status" } }',
      '        answer: { status: 200 }',
      '      - expect: hangup',
      '',
    ].join('\n');
    const r = runCase(await yamlFlow(DESK, 'desk.yaml'), parseScenario(text, 's.yaml').cases[0]!);
    expect(r.failure?.message).toBeUndefined();
    expect(r.ok).toBe(true);
  });
});

/** A flow whose `environments:` lines are given, a lookup sending env.key, and `say` spoken first. */
const keyed = (envs: string[], say = 'Hello.') =>
  [
    'version: 2',
    'name: bank',
    'secrets: [BANK_KEY, BANK_KEY_TEST]',
    'environments:',
    ...envs.map((l) => `  ${l}`),
    'start: hello',
    'steps:',
    `  hello: { say: "${say}", next: look }`,
    '  look:',
    '    http: { url: "https://api.example/v1", headers: { X-Key: "{{ env.key }}" }, query: { k: { expr: "env.key" } } }',
    '    on: { ok: end, default: end, error: end }',
    '  end: { hangup: {} }',
    '',
  ].join('\n');

describe('from_env of a declared secret', () => {
  const ENVS = ['production: { key: { from_env: BANK_KEY } }', 'test: { key: { from_env: BANK_KEY_TEST } }'];

  it('is read in http requests only, by the secrets reader: *** in the tools, the value in the server', async () => {
    const flow = await yamlFlow(keyed(ENVS), 'bank.yaml');
    const text = [
      'flow: bank',
      'cases:',
      '  - name: x',
      '    steps:',
      '      - expect: play',
      '      - expect: { http: { method: GET, url: "https://api.example/v1?k=***", headers: { X-Key: "***" } } }',
      '        answer: { status: 200 }',
      '      - expect: hangup',
      '',
    ].join('\n');
    vi.stubEnv('BANK_KEY', 'k-123');
    expect(runCase(flow, parseScenario(text, 's.yaml').cases[0]!).failure?.message).toBeUndefined();
    const c = new Call(flow, { ...OPTS, secret: (n) => (n === 'BANK_KEY' ? 'k-123' : undefined) });
    c.start();
    const out = advance(c.flow, c.state, c.next({ command: 'play', command_result: '0' }), c.opts);
    expect(out.kind === 'effect' && out.effect.kind === 'http' && out.effect.params).toMatchObject({
      url: 'https://api.example/v1?k=k-123',
      headers: { 'X-Key': 'k-123' },
    });
  });

  it('read elsewhere is SECRET_OUTSIDE_HTTP; every environment must read a secret there, with no default', () => {
    const diags = (envs: string[], say?: string) =>
      checkFlow(keyed(envs, say), 'bank.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);
    expect(diags(ENVS, 'Your key is {{ env.key }}.')).toEqual([
      '9:33 SECRET_OUTSIDE_HTTP env.key is a secret (read from a variable declared in secrets:), read outside an ' +
        "http step's url, headers, query or body",
    ]);
    expect(diags(['production: { key: { from_env: BANK_KEY } }', 'test: { key: "test-key" }'])).toEqual([
      '6:16 TYPE_MISMATCH environment test: key is a secret (environment production reads the secret BANK_KEY, ' +
        'declared in secrets:), and here it is not',
    ]);
    expect(diags(['production: { key: { from_env: BANK_KEY, default: "k-0" } }'])).toEqual([
      '5:44 MISPLACED_KEY environment production: key reads the secret BANK_KEY, which has no default written in ' +
        'the flow',
    ]);
  });
});

describe('checked at load', () => {
  const diags = (envs: string[]) =>
    checkFlow(keyed(envs), 'bank.yaml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);

  it('the variable name, the keys of the map, a default that is no text', () => {
    expect(
      diags([
        'a: { key: { from_env: "bank-url" } }',
        'b: { key: { from_evn: BANK_URL } }',
        'c: { key: { default: x } }',
        'd: { key: { from_env: URL, default: [x] } }',
      ]),
    ).toEqual([
      "5:25 BAD_NAME environment a: key: from_env names a variable of the server's environment (letters, digits " +
        'and _, not starting with a digit, 64 at most), not a string ("bank-url")',
      "6:15 UNKNOWN_KEY environment b: key: unknown key 'from_evn'",
      "7:13 MISSING_KEY environment c: key: a value read from the server's environment needs from_env: NAME",
      '8:39 TYPE_MISMATCH environment d: key: default: an environment value is a text (or a number, taken as ' +
        'written), or { from_env: NAME }, not a list',
    ]);
  });

  it("a checked param is checked with each environment's literal values; a server variable when the call runs", () => {
    const text = [
      'version: 2',
      'environments:',
      '  local: { support: { from_env: SUPPORT_NUMBER } }',
      '  production: { support: "+4420" }',
      'start: t',
      'steps:',
      '  t: { dialout: { targets: ["{{ env.support }}"] }, on: { NOANSWER: end } }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    expect(checkFlow(text, 'x.yaml').diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      'BAD_FORMAT step \'t\': target: number in environment production is "+4420": not a possible phone number ' +
        'for its country code',
    ]);
  });
});

describe('serve warns about a variable not set', () => {
  it('names the from_env variables of the selected environment unset and without a default (not secrets)', async () => {
    const flow = await yamlFlow(DESK, 'desk.yaml');
    expect(unsetServerVariables(flow.model, () => undefined)).toEqual([]); // local: DESK_API_URL has a default
    const prod = checkFlow(DESK, 'desk.yaml', { environment: 'production' }).model!;
    expect(unsetServerVariables(prod, () => undefined)).toEqual(['DESK_SUPPORT']);
    expect(unsetServerVariables(prod, (n) => (n === 'DESK_SUPPORT' ? '+442079460001' : undefined))).toEqual([]);
  });
});

describe('in a module', () => {
  it("a module's from_env value is read in the flow that enters it; the flow's own value wins a shared name", () => {
    const greet = `version: 2
name: greet
module: { results: [done] }
environments:
  local: { who: { from_env: GREET_WHO, default: world }, api: { from_env: GREET_API } }
start: hi
steps:
  hi: { say: "Hello {{ env.who }} {{ env.api }}.", next: done }
  done: { return: done }
`;
    const main = `version: 2
name: main
environments:
  local: { api: "https://main.example" }
start: go
steps:
  go: { subflow: { flow: greet }, next: end }
  end: { hangup: {} }
`;
    const { flows, diagnostics } = load({ 'main.yaml': main, 'greet.yaml': greet });
    expect(diagnostics).toEqual([]);
    const c = new Call(flows.get('main')!, { ...OPTS, environ: (n) => ({ GREET_WHO: 'Ann', GREET_API: 'x' })[n] });
    expect(c.start()).toBe(reply('play', 1, { media_id: tts('Hello Ann https://main.example.') }));
  });
});

describe('docs/flow-language.md', () => {
  it("the example of 'Values from the server's environment' checks clean and the schema accepts it", () => {
    const doc = readFileSync(new URL('../../docs/flow-language.md', import.meta.url), 'utf8');
    const flow = /```yaml\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('### Values from the server')))![1]!;
    expect(checkFlow(flow, 'example.yaml').diagnostics).toEqual([]);
    const validate = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true }).compile(flowJsonSchema());
    expect(validate(parse(flow)), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('hostile', () => {
  it('500 values read from the server environment cost one read each per request, not per template', async () => {
    const keys = Array.from({ length: 500 }, (_, i) => `k${i}: { from_env: V${i}, default: "d${i}" }`);
    const says = Array.from({ length: 50 }, (_, i) => `{{ env.k${i * 10} }}`).join(' ');
    const text = [
      'version: 2',
      'environments:',
      `  local: { ${keys.join(', ')} }`,
      'start: s',
      'steps:',
      `  s: { set: { a: "${says}", b: "${says}", c: "${says}" }, next: t }`,
      '  t: { say: "{{ vars.a | size }}", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    const flow = await yamlFlow(text, 'many.yaml');
    let reads = 0;
    const t = performance.now();
    const out = advance(flow, undefined, req(), { ...OPTS, environ: () => (reads++, undefined) });
    expect(performance.now() - t).toBeLessThan(200);
    expect(reads).toBe(500);
    expect(out.kind === 'reply' && out.state?.vars.a).toBe(says.replace(/\{\{ env\.k(\d+) \}\}/g, 'd$1'));
  });
});
