import { describe, expect, it } from 'vitest';
import { Registry } from '../../src/registry/registry.js';
import { LiveCalls } from '../../src/registry/live.js';
import { diffSteps } from '../../src/registry/impact.js';
import { seededRoll } from '../../src/registry/canary.js';
import { checkFlow } from '../../src/flow/check.js';
import { V1, V2 } from './fixtures.js';

const BROKEN = `version: 1
name: desk
start: nowhere
steps:
  menu:
    say: "x"
`;

const F = '/flows/desk.yaml';
const live = () => new LiveCalls(60_000);

describe('Registry.reload', () => {
  it('publishes a new hash, keeps the old version for live calls, and does nothing on the same hash', () => {
    const r = new Registry();
    const first = r.reload([{ file: F, text: V1 }]);
    const v1 = r.current('desk')!.version;
    expect(first.published).toEqual([{ name: 'desk', version: v1 }]);
    expect(r.reload([{ file: F, text: V1 }]).unchanged).toEqual(['desk']);
    const l = live();
    l.set('c1', 'desk', v1, 'sales');
    const second = r.reload([{ file: F, text: V2 }], l);
    const v2 = r.current('desk')!.version;
    expect(v2).not.toBe(v1);
    expect(second.published[0]).toMatchObject({ name: 'desk', version: v2, from: v1 });
    expect(r.get('desk', v1)?.version).toBe(v1);
  });

  it('refuses a broken edit: the current version keeps serving and the errors are pending until fixed', () => {
    const r = new Registry();
    r.reload([{ file: F, text: V1 }]);
    const v1 = r.current('desk')!.version;
    const res = r.reload([{ file: F, text: BROKEN }]);
    expect(res.refused).toEqual([F]);
    expect(res.kept).toEqual(['desk']);
    expect(r.current('desk')!.version).toBe(v1);
    const pending = r.pendingErrors().get(F)!;
    expect(pending.map((d) => [d.code, d.line, d.column])).toEqual([['UNKNOWN_STEP', 3, 8]]);
    r.reload([{ file: F, text: V2 }]);
    expect(r.pendingErrors().size).toBe(0);
    expect(r.current('desk')!.version).not.toBe(v1);
  });

  it('marks a deleted flow: no new calls, its live versions stay until released', () => {
    const r = new Registry();
    r.reload([{ file: F, text: V1 }]);
    const v1 = r.current('desk')!.version;
    const l = live();
    l.set('c1', 'desk', v1, 'menu');
    expect(r.reload([], l).deleted).toEqual(['desk']);
    expect(r.current('desk')).toBeUndefined();
    expect(r.pick('desk', 'c2')).toBeUndefined();
    expect(r.has('desk')).toBe(false);
    expect(r.get('desk', v1)?.version).toBe(v1);
    l.end('c1');
    expect(r.release(l)).toEqual([{ name: 'desk', version: v1 }]);
    expect(r.get('desk', v1)).toBeUndefined();
  });

  it('releases an old version once no live call uses it (newest and previous stay)', () => {
    const r = new Registry();
    const l = live();
    const texts = [V1, V2, V1.replace('Goodbye.', 'Bye.')];
    const versions: string[] = [];
    for (const t of texts) {
      r.reload([{ file: F, text: t }], l);
      versions.push(r.current('desk')!.version);
      if (versions.length === 1) l.set('c1', 'desk', versions[0]!, 'menu');
    }
    expect(r.get('desk', versions[0]!)).toBeDefined(); // a live call holds it
    l.end('c1');
    expect(r.release(l)).toEqual([{ name: 'desk', version: versions[0] }]);
    expect(r.get('desk', versions[1]!)).toBeDefined(); // previous: the canary base
  });

  it('writes an exact impact report on a fixture edit', () => {
    const r = new Registry({ now: () => 1000 });
    r.reload([{ file: F, text: V1 }]);
    const v1 = r.current('desk')!.version;
    const l = live();
    l.set('a', 'desk', v1, 'menu');
    l.set('b', 'desk', v1, 'sales');
    l.set('c', 'desk', v1, 'sales');
    l.set('d', 'desk', v1, 'bye');
    const res = r.reload([{ file: F, text: V2 }], l);
    const v2 = r.current('desk')!.version;
    expect(res.published[0]!.impact).toEqual({
      flow: 'desk',
      from: v1,
      to: v2,
      at: 1000,
      changed: ['menu'],
      added: ['help'],
      removed: ['sales'],
      liveCalls: 4,
      inChanged: 1,
      inRemoved: 2,
      byStep: { menu: 1, sales: 2 },
    });
    expect(r.entry('desk')!.impact).toEqual(res.published[0]!.impact);
  });

  it('ignores positions when diffing steps', () => {
    const a = checkFlow(V1, 'a.yaml').model!;
    const b = checkFlow(V1.replace('steps:\n', 'steps:\n\n\n'), 'b.yaml').model!;
    expect(diffSteps(a, b)).toEqual({ changed: [], added: [], removed: [] });
  });

  it('rolls back to an earlier version and forward again; a released version is recompiled from its source', () => {
    const r = new Registry();
    const l = live();
    r.reload([{ file: F, text: V1 }], l);
    const v1 = r.current('desk')!.version;
    r.reload([{ file: F, text: V2 }], l);
    const v2 = r.current('desk')!.version;
    const v3text = V2.replace('Goodbye.', 'Bye now.');
    r.reload([{ file: F, text: v3text }], l);
    const v3 = r.current('desk')!.version;
    expect(r.get('desk', v1)).toBeUndefined(); // released
    expect(r.setCurrent('desk', v1)).toBe('ok');
    expect(r.current('desk')!.version).toBe(v1);
    expect(r.pick('desk', 'x')!.version).toBe(v1);
    expect(r.setCurrent('desk', 'ffffffffffff')).toBe('UNKNOWN_VERSION');
    expect(r.setCurrent('nope', v1)).toBe('UNKNOWN_FLOW');
    expect(r.setCurrent('desk', v3)).toBe('ok');
    expect(r.current('desk')!.version).toBe(v3);
    expect(r.entry('desk')!.pinned).toBeUndefined();
    expect(v2).not.toBe(v3);
  });

  describe('canary', () => {
    const setup = (seed = 's') => {
      const r = new Registry({ seed });
      r.reload([{ file: F, text: V1 }]);
      const v1 = r.current('desk')!.version;
      r.reload([{ file: F, text: V2 }]);
      const v2 = r.current('desk')!.version;
      return { r, v1, v2 };
    };
    const ids = Array.from({ length: 1000 }, (_, i) => String(1_000_000 + i));

    it('at 0% sends every new call to the previous version', () => {
      const { r, v1 } = setup();
      r.setCanary('desk', 0);
      expect(new Set(ids.map((id) => r.pick('desk', id)!.version))).toEqual(new Set([v1]));
    });

    it('at 100% sends every new call to the newest version', () => {
      const { r, v2 } = setup();
      r.setCanary('desk', 100);
      expect(new Set(ids.map((id) => r.pick('desk', id)!.version))).toEqual(new Set([v2]));
    });

    it('splits by a seeded coin: the same callid always lands the same way', () => {
      const { r, v2 } = setup('seed-1');
      r.setCanary('desk', 20);
      const roll = seededRoll('seed-1');
      const expected = ids.filter((id) => roll(id, 'desk') < 0.2).length;
      const got = ids.filter((id) => r.pick('desk', id)!.version === v2).length;
      expect(got).toBe(expected);
      expect(got).toBe(193); // fixed by the seed
      expect(ids.map((id) => r.pick('desk', id)!.version)).toEqual(ids.map((id) => r.pick('desk', id)!.version));
    });

    it('takes an injected coin; without a canary new calls get the current version', () => {
      const r = new Registry({ roll: (callid) => (callid === 'low' ? 0.1 : 0.9) });
      r.reload([{ file: F, text: V1 }]);
      const v1 = r.current('desk')!.version;
      r.reload([{ file: F, text: V2 }]);
      const v2 = r.current('desk')!.version;
      expect(r.pick('desk', 'low')!.version).toBe(v2);
      r.setCanary('desk', 50);
      expect(r.pick('desk', 'low')!.version).toBe(v2);
      expect(r.pick('desk', 'high')!.version).toBe(v1);
      r.setCurrent('desk', v1); // a rollback ends the canary
      expect(r.pick('desk', 'low')!.version).toBe(v1);
      expect(r.entry('desk')!.canary).toBeUndefined();
    });
  });
});
