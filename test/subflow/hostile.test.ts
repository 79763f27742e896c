/**
 * What the worst module graph or call can do with subflows, and the bounds that stop it.
 */
import { describe, expect, it } from 'vitest';
import { Call, OPTS, reply, tts } from '../engine/helpers.js';
import { codes, load } from './helpers.js';

/** Module m<i> enters m<i+1> twice; the last one plays a line and returns. */
function diamond(levels: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < levels; i++) {
    files[`m${i}.yaml`] =
      i === levels - 1
        ? `version: 2\nmodule: { results: [done] }\nstart: a\nsteps:\n  a: { say: "leaf", next: b }\n  b: { ` +
          `return: done }\n`
        : `version: 2\nmodule: { results: [done] }\nstart: a\nsteps:\n  a:\n    subflow: { flow: m${i + 1} }\n ` +
          `   next: b\n  b:\n    subflow: { flow: m${i + 1} }\n    next: c\n  c: { return: done }\n`;
  }
  files['root.yaml'] =
    `version: 2\nstart: a\nsteps:\n  a:\n    subflow: { flow: m0 }\n    next: z\n  z: { hangup: {} }\n`;
  return files;
}

describe('a diamond of modules, each entering the next twice', () => {
  it('30 levels: refused once at the level that goes past 8, fast, every caller above naming it', () => {
    const t = performance.now();
    const { flows, diagnostics } = load(diamond(30));
    expect(performance.now() - t).toBeLessThan(5000);
    expect(flows.size).toBe(0);
    const deep = diagnostics.filter((d) => d.code === 'SUBFLOW_TOO_DEEP');
    expect(codes(deep)).toEqual(['m20.yaml:6:22 SUBFLOW_TOO_DEEP']);
    expect(deep[0]!.message).toBe("step 'a': entering 'm21' nests subflows 9 deep; at most 8 are allowed");
    const root = diagnostics.filter((d) => d.file === 'root.yaml');
    expect(codes(root)).toEqual(['root.yaml:5:22 MODULE_INVALID']);
    expect(root[0]!.message).toBe(
      "step 'a': module 'm0' cannot be entered: it has 2 errors (m0.yaml:6:22 MODULE_INVALID, m0.yaml:9:22 " +
        'MODULE_INVALID), from m20.yaml:6:22 SUBFLOW_TOO_DEEP',
    );
    // m1..m19 each name the one below: one diagnostic per call site, none repeated
    expect(diagnostics.filter((d) => d.code === 'MODULE_INVALID')).toHaveLength(2 * 20 + 1);
  });

  it(
    '8 levels: each module compiled once into the flow (not once per call site), and a call runs all 128 ' +
      'leaves with at most 8 frames',
    () => {
      const { flows, diagnostics } = load(diamond(8));
      expect(diagnostics).toEqual([]);
      const root = flows.get('root')!;
      // 2 steps of the root + 7 modules of 3 steps + the leaf's 2, plus @end
      expect(Object.keys(root.config.states)).toHaveLength(2 + 7 * 3 + 2 + 1);
      const call = new Call(root);
      expect(call.start()).toBe(reply('play', 1, { media_id: tts('leaf') }));
      let plays = 1;
      let deepest = call.state!.f!.length;
      for (;;) {
        const r = call.result('0');
        if (!r.includes('"play"')) {
          expect(r).toBe(reply('hangup', plays + 1));
          break;
        }
        plays++;
        deepest = Math.max(deepest, call.state!.f!.length);
      }
      expect(plays).toBe(128);
      expect(deepest).toBe(8);
      expect(call.state!.f).toBeUndefined();
    },
  );
});

describe('cycles', () => {
  const mod = (name: string, next: string) =>
    `version: 2\nname: ${name}\nmodule: { results: [done] }\nstart: a\nsteps:\n  a:\n    subflow: { ` +
    `flow: ${next} }\n    next: b\n  b: { return: done }\n`;
  it('a module entering itself: one SUBFLOW_CYCLE', () => {
    const { diagnostics } = load({ 'a.yaml': mod('a', 'a') });
    expect(codes(diagnostics)).toEqual(['a.yaml:7:22 SUBFLOW_CYCLE']);
    expect(diagnostics[0]!.message).toBe('modules enter each other in a cycle: a -> a (a at a.yaml:7:22)');
  });
  it('a -> b -> c -> a with a flow entering b: one SUBFLOW_CYCLE, the flow refused naming it', () => {
    const { flows, diagnostics } = load({
      'a.yaml': mod('a', 'b'),
      'b.yaml': mod('b', 'c'),
      'c.yaml': mod('c', 'a'),
      'root.yaml': 'version: 2\nstart: v\nsteps:\n  v:\n    subflow: { flow: b }\n    next: z\n  z: { hangup: {} }\n',
    });
    expect(flows.size).toBe(0);
    expect(codes(diagnostics)).toEqual(['a.yaml:7:22 SUBFLOW_CYCLE', 'root.yaml:5:22 MODULE_INVALID']);
    expect(diagnostics[0]!.message).toBe(
      'modules enter each other in a cycle: a -> b -> c -> a (a at a.yaml:7:22, b at b.yaml:7:22, c at c.yaml:7:22)',
    );
    expect(diagnostics[1]!.message).toBe(
      "step 'v': module 'b' cannot be entered: it is in a cycle of subflows (a -> b -> c -> a)",
    );
  });
});

describe('the call state inside modules', () => {
  const big = 'x'.repeat(12_000);
  const files = {
    'root.yaml':
      `version: 2\nvars: { blob: "${big}" }\nhandlers: { hangup: ended }\nstart: menu\nsteps:\n  menu:\n    ` +
      `read: { prompt: "Press 1", max_digits: 1 }\n    on: { "1": enter, error: sorry }\n    next: menu\n  ` +
      `enter:\n    subflow: { flow: copy, with: { data: "{{ vars.blob }}{{ vars.blob }}" } }\n    next: z\n  ` +
      `sorry: { say: "Sorry.", next: z }\n  z: { hangup: {} }\n  ended: { set: { seen: "{{ vars.blob | size ` +
      `}}" } }\n`,
    'copy.yaml':
      `version: 2\nmodule: { params: { data: required }, results: [done] }\nstart: a\nsteps:\n  a: { say: "In ` +
      `the module.", next: b }\n  b: { return: done }\n`,
  };

  it('frames count in the state cap: params over it drop the request, the step before takes its error way', () => {
    const { flows, diagnostics } = load(files);
    expect(diagnostics).toEqual([]);
    const call = new Call(flows.get('root')!);
    call.start();
    expect(call.result('1')).toBe(reply('play', 2, { media_id: tts('Sorry.') }));
    expect(call.last!.kind === 'reply' && call.last!.log?.map((l) => l.code)).toEqual(['STATE_TOO_LARGE']);
    expect(call.state!.f).toBeUndefined();
  });

  it("a hangup inside a module runs the served flow's hangup handler with its own vars", () => {
    const { flows } = load({
      ...files,
      'root.yaml': files['root.yaml'].replace('{{ vars.blob }}{{ vars.blob }}', 'small'),
    });
    const call = new Call(flows.get('root')!);
    call.start();
    expect(call.result('1')).toBe(reply('play', 2, { media_id: tts('In the module.') }));
    expect(call.state!.f).toHaveLength(1);
    const out = call.send(call.next({ call_status: 'HANGUP' }));
    expect(out).toBe(reply('hangup', 3));
    expect(call.last!.kind === 'reply' && call.last!.summary?.vars).toEqual({ blob: big, seen: '12000' });
  });

  it('frames are bounded: a call state claiming more frames than the nesting bound ends the call', () => {
    const { flows } = load({
      ...files,
      'root.yaml': files['root.yaml'].replace('{{ vars.blob }}{{ vars.blob }}', 'small'),
    });
    const call = new Call(flows.get('root')!, OPTS);
    call.start();
    call.state = { ...call.state!, f: Array.from({ length: 8 }, () => ({ s: 'enter', v: {} })) };
    expect(call.result('1')).toBe(reply('hangup', 2));
    expect(call.last!.kind === 'reply' && call.last!.log?.map((l) => l.code)).toEqual(['SUBFLOW_DEPTH']);
  });
});

describe('a long chain of module files', () => {
  it('3,000 modules each entering the next: refused at the depth bound, no stack overflow, in linear time', () => {
    const files: Record<string, string> = {};
    const n = 3000;
    for (let i = 0; i < n; i++) {
      files[`c${i}.yaml`] =
        i === n - 1
          ? 'version: 2\nmodule: { results: [done] }\nstart: a\nsteps:\n  a: { return: done }\n'
          : `version: 2\nmodule: { results: [done] }\nstart: a\nsteps:\n  a:\n    subflow: { flow: c${i + 1} ` +
            `}\n    next: b\n  b: { return: done }\n`;
    }
    const t = performance.now();
    const { diagnostics } = load(files);
    expect(performance.now() - t).toBeLessThan(20_000);
    expect(codes(diagnostics.filter((d) => d.code === 'SUBFLOW_TOO_DEEP'))).toEqual([
      `c${n - 10}.yaml:6:22 SUBFLOW_TOO_DEEP`,
    ]);
    expect(diagnostics.filter((d) => d.code === 'MODULE_INVALID')).toHaveLength(n - 10);
  });
});
