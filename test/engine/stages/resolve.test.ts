/** Flow resolution (src/engine/resolve.ts): routes, pinned versions, the live-call limit, and the refusals. */
import { describe, expect, it } from 'vitest';
import type { CompiledFlow } from '../../../src/engine/compile.js';
import type { CallLogger, LiveTracker } from '../../../src/engine/ports.js';
import { FlowResolver } from '../../../src/engine/resolve.js';
import type { CallState } from '../../../src/engine/types.js';
import { menu, req } from '../helpers.js';

const f = menu();
const other = { ...f, name: 'other' } as CompiledFlow;
const warnings: string[] = [];
const log: CallLogger = {
  info() {},
  warn: (o) => void warnings.push((o as { code?: string }).code ?? ''),
  error() {},
  debug() {},
};

function liveOf(size: number) {
  const set: string[] = [];
  const errors: string[] = [];
  const live: LiveTracker = {
    set: (callid, flow) => void set.push(`${callid}:${flow}`),
    end: () => true,
    purge: () => 0,
    started() {},
    error: (flow, version) => void errors.push(`${flow}@${version}`),
    size,
  };
  return { live, set, errors };
}

const versions = (fetched?: CompiledFlow) => ({
  get: (n: string, v: string) => (n === f.name && v === f.version ? f : undefined),
  pick: (n: string) => (n === f.name ? f : n === 'other' ? other : undefined),
  ...(fetched ? { fetch: async () => fetched } : {}),
});

describe('FlowResolver', () => {
  it('routes a new call by the URL, else its app, else the called number, else the default', () => {
    const r = new FlowResolver(versions(), liveOf(0).live, {
      apps: { APPX: 'other' },
      numbers: { '+33180000000': f.name },
      default: 'other',
    });
    expect(r.route(req({ app: 'APPX' }), f.name).name).toBe(f.name);
    expect(r.route(req({ app: 'APPX' })).name).toBe('other');
    expect(r.route(req({ app: 'NONE' })).name).toBe(f.name);
    expect(r.route(req({ app: 'NONE', number: '+1' })).name).toBe('other');
    // a request's app is data: it never finds a member of Object.prototype
    const plain = new FlowResolver(versions(), liveOf(0).live, { apps: {}, numbers: {} });
    for (const name of ['constructor', '__proto__', 'toString'])
      expect(plain.route(req({ app: name })).name).toBeUndefined();
  });

  it('a new call: counted live at its start step; refused past the limit unless terminal; not found said', async () => {
    const { live, set } = liveOf(2);
    const r = new FlowResolver(versions(), live, { apps: {}, numbers: {} }, 2);
    expect(await r.resolve(req({ callid: '5' }), undefined, f.name, log)).toMatchObject({
      kind: 'answer',
      answer: { kind: 'unavailable', code: 'CALL_LIMIT' },
    });
    expect(warnings).toContain('CALL_LIMIT');
    const hangup = await r.resolve(req({ callid: '5', call_status: 'HANGUP' }), undefined, f.name, log);
    expect(hangup).toEqual({ kind: 'flow', flow: f, isNew: true });
    expect(set).toEqual([`5:${f.name}`]);
    const free = new FlowResolver(versions(), liveOf(0).live, { apps: {}, numbers: {} });
    expect(await free.resolve(req(), undefined, 'nope', log)).toEqual({
      kind: 'answer',
      answer: { kind: 'not_found', code: 'UNKNOWN_FLOW', message: 'no flow named "nope" is loaded' },
    });
    expect(await free.resolve(req({ app: 'A', number: 'N' }), undefined, undefined, log)).toEqual({
      kind: 'answer',
      answer: {
        kind: 'not_found',
        code: 'NO_ROUTE',
        message: 'no route for app "A" or number "N" and no default flow',
      },
    });
    // a terminal request of a call never known: hangup, nothing else
    const end = await free.resolve(req({ call_status: 'NOANSWER', command_id: 4 }), undefined, undefined, log);
    expect(end).toMatchObject({
      kind: 'answer',
      answer: { kind: 'answered', body: expect.stringContaining('"command_id":5') },
    });
  });

  it('a live call: its pinned version, here or fetched; a version gone is failed, or buried when over', async () => {
    const prior = { flow: f.name, version: f.version } as CallState;
    const gone = { flow: f.name, version: 'gone' } as CallState;
    const { live, errors } = liveOf(0);
    const r = new FlowResolver(versions(), live, { apps: {}, numbers: {} });
    expect(await r.resolve(req(), prior, 'other', log)).toEqual({ kind: 'flow', flow: f, isNew: false });
    expect(await r.resolve(req(), gone, undefined, log)).toMatchObject({
      kind: 'answer',
      answer: { kind: 'failed', code: 'FLOW_VERSION_GONE' },
    });
    expect(errors).toEqual([`${f.name}@gone`]);
    expect(await r.resolve(req({ call_status: 'HANGUP' }), gone, undefined, log)).toMatchObject({
      kind: 'answer',
      bury: true,
    });
    const shared = new FlowResolver(versions(other), live, { apps: {}, numbers: {} });
    expect(await shared.resolve(req(), gone, undefined, log)).toEqual({ kind: 'flow', flow: other, isNew: false });
  });
});
