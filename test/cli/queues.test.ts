/**
 * `callscript queues` against a fake admin API (a plain HTTP server on loopback answering what docs/admin.md
 * "Queues" says): the exact text of every queue and of one, --json, pause and resume (the request sent), and the
 * errors with their exit codes (unknown queue, a store without queues, bad arguments, credentials).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queues } from '../../src/cli/queues.js';
import { queuesText } from '../../src/cli/queues-format.js';
import type { QueueJson } from '../../src/http/queues.js';

const SALES: QueueJson = {
  name: 'sales',
  waiting: 4,
  longestWaitMs: 83_000,
  answered: 12,
  abandoned: 3,
  timedOut: 1,
  handleMs: 125_000,
  agentCounts: { free: 1, busy: 1, wrapUp: 1, paused: 1 },
  line: [
    {
      position: 1,
      callid: '4242',
      since: '2026-11-25T09:58:37.000Z',
      lastSeen: '2026-11-25T09:59:59.000Z',
      waitedMs: 83_000,
      ringing: null,
    },
    {
      position: null,
      callid: '4243',
      since: '2026-11-25T09:59:20.000Z',
      lastSeen: '2026-11-25T09:59:58.000Z',
      waitedMs: 40_000,
      ringing: '+33612345678',
    },
    {
      position: 2,
      callid: '4244',
      since: '2026-11-25T09:59:54.500Z',
      lastSeen: '2026-11-25T09:59:59.500Z',
      waitedMs: 5_500,
      ringing: null,
    },
  ],
  agents: [
    {
      number: '+33612345678',
      state: 'busy',
      paused: false,
      since: '2026-11-25T09:59:50.000Z',
      until: null,
      callid: '4243',
      queue: 'sales',
    },
    {
      number: '+33612345679',
      state: 'free',
      paused: false,
      since: '2026-11-25T09:50:00.000Z',
      until: null,
      callid: null,
      queue: null,
    },
    {
      number: '+33612345680',
      state: 'wrap_up',
      paused: false,
      since: '2026-11-25T09:59:30.000Z',
      until: '2026-11-25T10:00:15.000Z',
      callid: null,
      queue: null,
    },
    { number: '+33612345681', state: 'busy', paused: true, since: null, until: null, callid: '5000', queue: 'vip' },
  ],
};
const NIGHT: QueueJson = {
  name: 'night',
  waiting: 0,
  longestWaitMs: 0,
  answered: 0,
  abandoned: 0,
  timedOut: 0,
  handleMs: null,
  agentCounts: { free: 0, busy: 0, wrapUp: 0, paused: 0 },
  line: [],
  agents: [],
};

const SALES_TEXT = [
  'queue sales: 4 waiting, the longest 1m23s; agents 1 free, 1 busy, 1 wrap-up, 1 paused; answered 12, abandoned ' +
    '3, timed out 1; mean handling 2m05s',
  '  POSITION  CALLID  WAITED  RINGING',
  '  1         4242    1m23s   -',
  '  -         4243    40.0s   +33612345678',
  '  2         4244    5.5s    -',
  '  (1 more waiting after these)',
  '  AGENT         STATE    PAUSED  SINCE (UTC)          UNTIL (UTC)          CALL',
  '  +33612345678  busy     no      2026-11-25 09:59:50  -                    4243',
  '  +33612345679  free     no      2026-11-25 09:50:00  -                    -',
  '  +33612345680  wrap_up  no      2026-11-25 09:59:30  2026-11-25 10:00:15  -',
  '  +33612345681  busy     yes     -                    -                    5000 (vip)',
].join('\n');
const NIGHT_TEXT = [
  'queue night: nobody waiting; agents 0 free, 0 busy, 0 wrap-up, 0 paused; answered 0, abandoned 0, timed out 0',
  '  no agents known yet (an agent is known from the first call that lists it, or a pause)',
].join('\n');

function capture(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(chunk, _e, cb) {
        s += chunk.toString();
        cb();
      },
    }),
    text: () => s,
  };
}

/** The requests the fake admin API got: method, URL, authorization, body. */
let seen: [string, string, string | undefined, string][] = [];
let answers: Record<string, [number, unknown]> = {};
let server: Server;
let base: string;
const noEnv = {} as NodeJS.ProcessEnv;

const body = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (c: Buffer) => (s += c.toString()));
    req.on('end', () => resolve(s));
  });

beforeAll(async () => {
  server = createServer((req, res) => {
    void body(req).then((b) => {
      seen.push([req.method!, req.url!, req.headers.authorization, b]);
      const [status, json] = answers[`${req.method} ${req.url}`] ?? [
        404,
        { error: { code: 'NOT_FOUND', message: 'no' } },
      ];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://boss:s3cret@127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  answers = {
    'GET /admin/queues': [200, { queues: [NIGHT, SALES] }],
    'GET /admin/queues/sales': [200, SALES],
    'GET /admin/queues/nope': [
      404,
      {
        error: { code: 'UNKNOWN_QUEUE', message: 'no queue named "nope": no caller waits in it and no agent is known' },
      },
    ],
    'POST /admin/queues/sales/agents': [200, SALES],
  };
});

async function run(args: Parameters<typeof queues>[0], flags: Parameters<typeof queues>[1] = {}) {
  const o = capture();
  const e = capture();
  const code = await queues(args, { server: base, ...flags }, noEnv, o.out, e.out);
  return { code, out: o.text(), err: e.text() };
}

const AUTH = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');

describe('callscript queues', () => {
  it('prints every queue: its counts, its line and its agents', async () => {
    expect(await run({})).toEqual({ code: 0, out: `${NIGHT_TEXT}\n\n${SALES_TEXT}\n`, err: '' });
    expect(seen).toEqual([['GET', '/admin/queues', AUTH, '']]);
    expect(queuesText([])).toBe('no queues (none has had a caller or a paused agent)');
  });

  it('prints one queue; --json prints the answer as it came', async () => {
    expect(await run({ name: 'sales' })).toEqual({ code: 0, out: `${SALES_TEXT}\n`, err: '' });
    const j = await run({ name: 'sales' }, { json: true });
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out)).toEqual(SALES);
    expect(seen.map((s) => s[1])).toEqual(['/admin/queues/sales', '/admin/queues/sales']);
  });

  it('pauses and resumes an agent: the body sent, what it says, the queue after', async () => {
    expect(await run({ name: 'sales', action: 'pause', number: '+33612345679' })).toEqual({
      code: 0,
      out: `agent +33612345679 paused in queue sales\n\n${SALES_TEXT}\n`,
      err: '',
    });
    expect((await run({ name: 'sales', action: 'resume', number: '+33612345679' })).out).toMatch(
      /^agent \+33612345679 resumed in queue sales\n\nqueue sales: /,
    );
    expect(seen).toEqual([
      ['POST', '/admin/queues/sales/agents', AUTH, '{"number":"+33612345679","paused":true}'],
      ['POST', '/admin/queues/sales/agents', AUTH, '{"number":"+33612345679","paused":false}'],
    ]);
  });

  it('says why not, with exit 1 for a refusal and 2 when it could not ask', async () => {
    expect(await run({ name: 'nope' })).toEqual({
      code: 1,
      out: '',
      err: 'callscript queues: UNKNOWN_QUEUE: no queue named "nope": no caller waits in it and no agent is known\n',
    });
    answers['GET /admin/queues'] = [
      404,
      { error: { code: 'QUEUES_UNSUPPORTED', message: 'the call store has no queues' } },
    ];
    expect(await run({})).toEqual({
      code: 2,
      out: '',
      err: 'callscript queues: QUEUES_UNSUPPORTED: the call store has no queues\n',
    });
    answers['POST /admin/queues/sales/agents'] = [
      400,
      { error: { code: 'BAD_ADMIN_BODY', message: 'number "0612" is not E.164' } },
    ];
    expect((await run({ name: 'sales', action: 'pause', number: '0612' })).code).toBe(1);
    expect(seen).toHaveLength(3);
    expect(await run({ name: 'sales', action: 'stop', number: '+33612345679' })).toEqual({
      code: 2,
      out: '',
      err:
        'callscript queues: the action is pause or resume, not "stop": callscript queues <name> pause|resume ' +
        '<number>\n',
    });
    expect(await run({ name: 'sales', action: 'pause' })).toEqual({
      code: 2,
      out: '',
      err:
        "callscript queues: give the agent's number: callscript queues sales pause <number> (E.164, e.g. " +
        '+33612345678)\n',
    });
    expect(seen).toHaveLength(3);
    const anonymous = capture();
    const url = base.replace('boss:s3cret@', '');
    answers['GET /admin/queues'] = [401, { error: { code: 'ADMIN_AUTH_REQUIRED', message: 'no' } }];
    expect(await queues({}, { server: url }, noEnv, capture().out, anonymous.out)).toBe(2);
    expect(anonymous.text()).toBe(
      'callscript queues: no admin credentials given (ADMIN_AUTH_REQUIRED): give them in --server ' +
        'http://LOGIN:PASSWORD@host:port, or ADMIN_LOGIN and ADMIN_PASSWORD\n',
    );
  });

  it("escapes the control characters of what the server says (a caller's or a flow's text)", async () => {
    answers['GET /admin/queues'] = [200, { queues: [{ ...NIGHT, name: 'a\u001b[2Jb' }] }];
    expect((await run({})).out).toBe(NIGHT_TEXT.replace('queue night', 'queue a\\x1b[2Jb') + '\n');
  });
});
