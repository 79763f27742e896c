/**
 * A call that ends bridged to a dialout's target is `transferred` (issue 22 item 9), not `abandoned`: in the call
 * history, the metrics and `callscript trace`. Through fastify.inject.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { traceText, type CallDetail } from '../../src/cli/calls-format.js';
import { callOutcomeOf, isTransferEnd } from '../../src/engine/observe.js';
import { createServer } from '../../src/http/server.js';
import { rtBody, type RtFields } from '../helpers/rt.js';

const FLOWS = new URL('../fixtures/metrics-flows', import.meta.url).pathname;
const AUTH = 'Basic ' + Buffer.from('boss:s3cret').toString('base64');
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const post = (app: FastifyInstance, over: Partial<RtFields>) =>
  app.inject({
    method: 'POST',
    url: '/rt/desk',
    headers: { 'content-type': 'application/json' },
    payload: rtBody(over),
  });

async function finished(app: FastifyInstance, callid: string): Promise<CallDetail & Record<string, unknown>> {
  return vi.waitFor(async () => {
    const r = await app.inject({ url: `/admin/calls/${callid}`, headers: { authorization: AUTH } });
    const body = r.json() as CallDetail & Record<string, unknown>;
    if (body.status !== 'finished') throw new Error('not finished yet');
    return body;
  });
}

describe('a call bridged by its dialout', () => {
  it('is transferred in the history, the metrics and the trace; hanging up at the menu is abandoned', async () => {
    const s = await createServer({ flowsDir: FLOWS, logLevel: false, admin: { login: 'boss', password: 's3cret' } });
    apps.push(s.app);
    const v = s.registry.current('desk')!.version;
    // 1: the menu, 1 (sales: dialout), the target answers; the bridged call ends: HANGUP reporting the dialout
    await post(s.app, { callid: '1' });
    await post(s.app, { callid: '1', command: 'read', command_id: 1, command_result: '1' });
    const end = await post(s.app, { callid: '1', command: 'dialout', command_id: 2, call_status: 'HANGUP' });
    expect(end.statusCode).toBe(200);
    // 2: hangs up at the menu
    await post(s.app, { callid: '2' });
    await post(s.app, { callid: '2', command: 'read', command_id: 1, call_status: 'HANGUP' });
    // 3: the dialout is not answered (NOANSWER), goodbye, the flow hangs up
    await post(s.app, { callid: '3' });
    await post(s.app, { callid: '3', command: 'read', command_id: 1, command_result: '1' });
    await post(s.app, { callid: '3', command: 'dialout', command_id: 2, command_result: 'NOANSWER' });
    await post(s.app, { callid: '3', command: 'play', command_id: 3, command_result: '0' });
    await post(s.app, { callid: '3', command: 'hangup', command_id: 4, call_status: 'HANGUP' });

    const one = await finished(s.app, '1');
    expect(one).toMatchObject({ outcome: 'transferred', status: 'finished', callStatus: 'HANGUP', lastStep: 'sales' });
    expect(await finished(s.app, '2')).toMatchObject({ outcome: 'abandoned' });
    expect(await finished(s.app, '3')).toMatchObject({ outcome: 'completed' });
    const metrics = await s.app.inject({ url: '/metrics' });
    expect(metrics.body.split('\n').filter((l) => l.startsWith('callscript_calls_ended_total{'))).toEqual([
      `callscript_calls_ended_total{flow="desk",version="${v}",outcome="transferred"} 1`,
      `callscript_calls_ended_total{flow="desk",version="${v}",outcome="abandoned"} 1`,
      `callscript_calls_ended_total{flow="desk",version="${v}",outcome="completed"} 1`,
    ]);
    expect(metrics.body).toContain(
      '# HELP callscript_calls_ended_total Calls ended, by flow version and outcome (completed, transferred, ' +
        'abandoned, error, ended_by_admin).',
    );
    expect(traceText(one).split('\n')[0]).toBe(`call 1  desk ${v}  finished: transferred (HANGUP), last step sales`);
    const rows = await s.app.inject({ url: '/admin/calls?status=finished', headers: { authorization: AUTH } });
    expect(
      (rows.json() as { calls: { callid: string; outcome: string }[] }).calls.map((c) => [c.callid, c.outcome]),
    ).toEqual([
      ['3', 'completed'],
      ['2', 'abandoned'],
      ['1', 'transferred'],
    ]);
  });

  it('only a HANGUP at a dialout the flow is waiting for; an engine error or the flow done first win', () => {
    expect(isTransferEnd('dialout', 'HANGUP')).toBe(true);
    expect(isTransferEnd('dialout', 'NOANSWER')).toBe(false);
    expect(isTransferEnd('read', 'HANGUP')).toBe(false);
    expect(callOutcomeOf(false, [], true)).toBe('transferred');
    expect(callOutcomeOf(false, ['STATE_INVALID'], true)).toBe('error');
    expect(callOutcomeOf(true, [], true)).toBe('completed');
    expect(callOutcomeOf(false, [])).toBe('abandoned');
  });
});
