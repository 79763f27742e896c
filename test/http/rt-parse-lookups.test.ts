/**
 * Names from a request are looked up in own entries only: an `app`, a called `number`, a
 * flow name in /rt/:flow or in an admin URL that names a member of Object.prototype
 * ("constructor", "__proto__", "toString", ...) finds nothing, and falls through to the
 * next route as any unknown name does. Also: body_depth as a setting.
 */
import { PluginControl } from '../../src/http/control.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { members, PARSE_FLOWS, post, probeServer, text } from '../helpers/parse.js';
import { checkConfig } from '../../src/config/check.js';
import { buildServer } from '../../src/http/server.js';
import { parseRtRequest } from '../../src/protocol/request.js';

const PROTO_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
];
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('routes by app and number: own entries only', () => {
  it.each(PROTO_NAMES)('app and number "%s" fall through to the default flow', async (name) => {
    ({ app } = await probeServer({
      routes: { apps: { A1: 'nowhere' }, numbers: { '+33123456789': 'nowhere' }, default: 'probe' },
    }));
    const res = await post(app, text(members({ app: name, number: name })), {}, '/rt');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ command: 'read', command_id: 1 });
  });

  it.each(PROTO_NAMES)('app and number "%s" with no default: 404 NO_ROUTE naming them', async (name) => {
    ({ app } = await probeServer({ routes: { apps: { A1: 'probe' }, numbers: {} } }));
    const res = await post(app, text(members({ app: name, number: name })), {}, '/rt');
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 404,
      body: {
        error: { code: 'NO_ROUTE', message: `no route for app "${name}" or number "${name}" and no default flow` },
      },
    });
  });

  it('routes set while running (a config reload) are looked up the same way', async () => {
    const control = new PluginControl();
    ({ app } = await probeServer({ routes: { apps: {}, numbers: {} }, control } as never));
    control.setRoutes({ apps: { A1: 'probe' }, numbers: {} });
    expect((await post(app, text(members({ app: 'A1' })), {}, '/rt')).statusCode).toBe(200);
    const res = await post(app, text(members({ app: 'constructor', callid: '77' })), {}, '/rt');
    expect(res.json()).toEqual({
      error: {
        code: 'NO_ROUTE',
        message: 'no route for app "constructor" or number "+33123456789" and no default flow',
      },
    });
  });

  it.each(PROTO_NAMES)('/rt/%s: 404 UNKNOWN_FLOW', async (name) => {
    ({ app } = await probeServer());
    const res = await post(app, text(members()), {}, `/rt/${encodeURIComponent(name)}`);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 404,
      body: { error: { code: 'UNKNOWN_FLOW', message: `no flow named "${name}" is loaded` } },
    });
  });
});

describe('admin routes by flow name: own entries only', () => {
  it.each(PROTO_NAMES)('"%s" is no flow: GET, current, canary answer 404 UNKNOWN_FLOW', async (name) => {
    ({ app } = await probeServer({ admin: { login: 'boss', password: 'pw' } }));
    const headers = { authorization: basic('boss', 'pw'), 'content-type': 'application/json' };
    const url = `/admin/flows/${encodeURIComponent(name)}`;
    const get = await app.inject({ method: 'GET', url, headers });
    expect({ status: get.statusCode, code: get.json().error.code }).toEqual({ status: 404, code: 'UNKNOWN_FLOW' });
    for (const [path, payload] of [
      ['current', '{"version":"abc"}'],
      ['canary', '{"percent":10}'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: `${url}/${path}`, headers, payload });
      expect({ status: res.statusCode, body: res.json() }, path).toEqual({
        status: 404,
        body: { error: { code: 'UNKNOWN_FLOW', message: `no flow named "${name}" takes calls` } },
      });
    }
    // the real flow is untouched
    const probe = (await app.inject({ method: 'GET', url: '/admin/flows/probe', headers })).json();
    expect({ pinned: probe.pinned, canary: probe.canary }).toEqual({ pinned: null, canary: null });
  });
});

describe('Content-Encoding on every route of the plugin, after the credentials', () => {
  it('401 without credentials, 415 with them; admin routes too', async () => {
    ({ app } = await probeServer({ auth: { login: 'svc', password: 'pw' }, admin: { login: 'boss', password: 'pw' } }));
    const gz = { 'content-encoding': 'gzip' };
    expect((await post(app, text(members()), gz)).statusCode).toBe(401);
    const rt = await post(app, text(members()), { ...gz, authorization: basic('svc', 'pw') });
    expect({ status: rt.statusCode, code: rt.json().error.code }).toEqual({
      status: 415,
      code: 'UNSUPPORTED_ENCODING',
    });
    const admin = (authorization?: string) =>
      app!.inject({
        method: 'POST',
        url: '/admin/flows/probe/canary',
        headers: { ...gz, 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        payload: '{"percent":10}',
      });
    expect((await admin()).statusCode).toBe(401);
    const refused = await admin(basic('boss', 'pw'));
    expect({ status: refused.statusCode, code: refused.json().error.code }).toEqual({
      status: 415,
      code: 'UNSUPPORTED_ENCODING',
    });
    const probe = (
      await app.inject({ method: 'GET', url: '/admin/flows/probe', headers: { authorization: basic('boss', 'pw') } })
    ).json();
    expect(probe.canary).toBeNull();
  });
});

describe('server.body_depth', () => {
  const deep = (n: number) => text(members({ variables: `{"a":${'['.repeat(n - 2)}${']'.repeat(n - 2)}}` }));

  it('is the deepest nesting accepted (the body is 1, variables 2)', async () => {
    ({ app } = await probeServer({ bodyDepth: 4 }));
    expect((await post(app, deep(4))).statusCode).toBe(200);
    const res = await post(app, deep(5).replace('"callid":4242', '"callid":4243'));
    expect(res.json()).toEqual({
      error: {
        code: 'BODY_TOO_DEEP',
        message:
          `the body nests objects and arrays more than 4 deep (at offset ${deep(5).indexOf('[[[') + 2}): see ` +
          `server.body_depth`,
      },
    });
    expect(parseRtRequest(deep(33))).toMatchObject({ ok: false, code: 'BODY_TOO_DEEP' });
    expect(parseRtRequest(deep(33), { maxDepth: 33 })).toMatchObject({ ok: true });
  });

  it('is checked as a plugin option and in the config file', async () => {
    for (const bodyDepth of [1, 257, 2.5]) {
      await expect(buildServer({ flowsDir: PARSE_FLOWS, logLevel: false, bodyDepth })).rejects.toThrow(
        `callscript plugin: bodyDepth must be an integer from 2 to 256, got ${bodyDepth}`,
      );
    }
    expect(
      checkConfig('server:\n  body_depth: 1\n', 'c.yaml').diagnostics.map((d) => `${d.code}@${d.line}:${d.column}`),
    ).toEqual(['OUT_OF_BOUNDS@2:15']);
    expect(checkConfig('server:\n  body_depth: 64\n', 'c.yaml').config?.server.body_depth).toBe(64);
    expect(checkConfig('', 'c.yaml').config?.server.body_depth).toBe(32);
  });
});
