/**
 * The fast program (advance) and the xstate machine (xstate-step) must take the same
 * decisions: random calls (seeded) on several flows, compared request by request on the
 * command, its params, the step, the counters and the variables. Each engine state is also
 * restored into a machine snapshot (resolveState) and fed the same request.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/advance.js';
import type { EffectResult } from '../../src/engine/outcome.js';
import { advance } from '../../src/engine/advance.js';
import { writeParams } from '../../src/engine/serialize.js';
import type { CallState } from '../../src/engine/types.js';
import { snapshotOfState, xstateFeed, xstateStart, type XStep } from '../../src/engine/xstate-step.js';
import type { CompiledFlow } from '../../src/flow/compile.js';
import { COMMANDS, type CommandName } from '../../src/protocol/commands.js';
import type { RtRequest } from '../../src/protocol/rt.js';
import { OPTS, cmd, flow, hangup, req, say, set, sw } from './helpers.js';
import { exampleFlows } from './yaml.js';

/** mulberry32: a small seeded PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function randomResult(r: () => number, f: CompiledFlow, state: CallState, command: CommandName): string {
  const step = f.program.steps.get(state.step);
  const keys = step && step.kind === 'command' && !state.after ? [...step.exact.keys(), ...step.inheritedExact.keys()] : [];
  if (keys.length > 0 && r() < 0.4) return pick(r, keys);
  const rs = COMMANDS[command].results;
  switch (rs.kind) {
    case 'enum':
      return pick(r, rs.values);
    case 'none':
      return '';
    case 'any':
      return pick(r, ['tmp-1.wav', 'REC42', '']);
    case 'digits': {
      if (r() < 0.25) return 'TIMEOUT';
      const n = 1 + Math.floor(r() * 4);
      let s = '';
      for (let i = 0; i < n; i++) s += pick(r, '0123456789*'.split(''));
      return s;
    }
  }
}

function normCounters(c: CallState['counters']) {
  return c ?? { n: 1, r: {} };
}

function compare(f: CompiledFlow, out: Outcome, x: XStep, where: string) {
  expect(out.kind, where).toBe('reply');
  if (out.kind !== 'reply') return;
  expect(x.command, where).toBe(out.reply.command);
  expect(writeParams(x.params), where).toBe(writeParams(out.reply.params));
  const s = out.state;
  if (!s) return;
  expect(x.vars, where).toEqual(s.vars);
  expect(x.done, where).toBe(!!s.done);
  if (!s.done) {
    expect(x.step, where).toBe(s.step);
    expect(x.counters, where).toEqual(normCounters(s.counters));
  }
  void f;
}

function walk(f: CompiledFlow, seed: number, calls: number): { requests: number; steps: Set<string>; effects: number } {
  const r = rng(seed);
  let requests = 0;
  let effects = 0;
  const steps = new Set<string>();
  for (let call = 0; call < calls; call++) {
    const base: Partial<RtRequest> = { callid: String(1000 + call), cli_number: pick(r, ['+33612345678', '+447700900123', '']) };
    let now = OPTS.now;
    const first = req(base);
    let out = advance(f, undefined, first, { ...OPTS, now });
    let x = xstateStart(f, first);
    compare(f, out, x, `${f.name} call ${call} start`);
    for (let i = 0; i < 40; i++) {
      if (out.kind !== 'reply' || !out.state || out.state.done) break;
      const state = out.state;
      steps.add(state.step);
      const command = out.reply.command;
      const roll = r();
      const p: Partial<RtRequest> = { ...base, command, command_id: state.commandId };
      if (roll < 0.04) p.call_status = pick(r, ['HANGUP', 'NOANSWER', 'BUSY', 'CONGESTION', 'REJECTED'] as const);
      if (roll >= 0.04 && roll < 0.12) p.command_error = pick(r, ['MEDIA_ERROR', 'FAILED']);
      else p.command_result = randomResult(r, f, state, command);
      const next = req(p);
      now += 1000;
      const where = `${f.name} call ${call} request ${i} ${JSON.stringify(p)}`;
      let restored = xstateFeed(f, snapshotOfState(f, state, next), next);
      out = advance(f, state, next, { ...OPTS, now });
      x = xstateFeed(f, x.snapshot, next);
      // effects (sms steps) within the request: the machine waits in the step's state for
      // its outcome as an event, the engine suspends and resumes
      while (out.kind === 'effect') {
        expect(x.command, where).toBe(out.effect.kind);
        expect(x.step, where).toBe(out.effect.step);
        expect(writeParams(x.params as never), where).toBe(writeParams(out.effect.params as never));
        const res: EffectResult = r() < 0.7 ? { ok: true, value: `SMS${call}` } : { ok: false, error: pick(r, ['REJECTED', 'TIMEOUT']) };
        const ev = req({ ...base, command: 'sms', command_result: res.ok ? res.value : '', command_error: res.ok ? '' : res.error });
        out = out.resume(res);
        x = xstateFeed(f, x.snapshot, ev);
        restored = xstateFeed(f, restored.snapshot, ev);
        effects++;
      }
      requests++;
      if (out.kind === 'reply' && out.state === null) {
        // terminal: the hangup handler ran on both sides
        expect(x.vars, where).toEqual(out.summary?.vars);
        expect(restored.vars, where).toEqual(out.summary?.vars);
        break;
      }
      compare(f, out, x, where);
      compare(f, out, restored, `${where} (restored)`);
    }
  }
  return { requests, steps, effects };
}

const handFlows = (): CompiledFlow[] => [
  flow({
    name: 'menu',
    vars: { visits: 0 },
    handlers: { hangup: 'log', error: 'sorry', on: { read: { '0': 'operator', '/^9+$/': 'nines' } } },
    steps: {
      route: sw([['call.caller.startsWith("+33")', 'fr'], ['vars.missing > 1', 'fr']], 'welcome'),
      fr: say('Bonjour.', 'menu'),
      welcome: say(['Welcome {{ call.caller | default: "caller" }}.'], 'menu'),
      menu: cmd(
        'read',
        { media_id: ['Press 1, 2 or 3.', 'Please press 1, 2 or 3.', 'Last chance.'], max_digits: 2 },
        {
          save: 'choice',
          on: {
            '1': 'count',
            '2': { say: 'Two.', goto: 'pin' },
            '3': { goto: 'menu' },
            '/^4[0-9]$/': 'count',
            _5X: { retry: 1, say: ['Fifty-something.', 'Again fifty.'], then: 'operator' },
            TIMEOUT: { retry: 2, then: 'operator' },
            default: { retry: 3, say: ['Sorry, {{ result }} is not a choice.', 'Still no.'], then: 'goodbye' },
            error: { retry: 1, then: 'sorry' },
          },
        },
      ),
      count: set({ visits: { expr: 'vars.visits + 1' }, last: '{{ vars.choice }}' }, 'again'),
      again: sw([['vars.visits < 3', 'menu']], 'goodbye'),
      pin: cmd('read', { media_id: ['PIN?'], max_digits: 4 }, { save: 'pin', on: { '/^[0-9]{4}$/': 'check', default: { retry: 2, then: 'goodbye' } }, handlers: false }),
      check: sw([['vars.pin == "1234"', 'operator']], 'goodbye'),
      operator: cmd('dialout', { targets: [{ number: '+33123456789', timeout: 30 }], whisper: ['Call from {{ call.caller }}.'] }, { on: { NOANSWER: { say: 'Busy.', goto: 'goodbye' } } }),
      nines: say('Nines.', 'goodbye'),
      sorry: say('Sorry, technical problem.', 'end', { on: { error: 'end' } }),
      goodbye: say('Goodbye.', 'end'),
      end: hangup(),
      log: set({ ended: '{{ call.status }}', n: { expr: 'vars.visits * 2' } }),
    },
  }),
  flow({
    name: 'params',
    vars: { target: '+33123456789', bad: 'nope', k: 0 },
    handlers: { error: { say: 'Handler.', goto: 'end' } },
    steps: {
      a: cmd('read', { media_id: ['Target?'], max_digits: 1 }, { save: 'sel', on: { '1': 'good', '2': 'bad', '3': { say: [{ kind: 'tts', voice: 'V', text: '{{ vars.msg }}' }], goto: 'a' }, default: 'kill' } }),
      good: cmd('dialout', { targets: [{ number: '{{ vars.target }}', timeout: 20 }] }, { on: { NOANSWER: 'a' } }),
      bad: cmd('dialout', { targets: [{ number: '{{ vars.bad }}', timeout: 20 }] }, { on: { NOANSWER: 'a', error: { retry: 1, say: 'Bad number.', then: 'tick' } } }),
      tick: set({ k: { expr: 'vars.k + 1' } }, 'a'),
      kill: cmd('hangup_callid', { callid: '{{ call.callid }}' }, { next: 'wait' }),
      wait: cmd('wait', { wait: 2 }, { next: 'rec' }),
      rec: cmd('record', { max_duration: 60 }, { save: 'msg', on: { '': 'a', default: 'play' } }),
      play: cmd('play_record', { media_file: '{{ vars.msg }}' }, { on: { '0': 'end', '1': 'a' } }),
      end: hangup(),
    },
  }),
];

describe('xstate machine and fast program take the same decisions', () => {
  it('on hand-built flows, 300 random calls each', () => {
    for (const [i, f] of handFlows().entries()) {
      const { requests, steps } = walk(f, 42 + i, 300);
      expect(requests).toBeGreaterThan(300);
      // the walk reached every command step
      const commandSteps = [...f.program.steps.values()].filter((s) => s.kind === 'command' && !s.final).map((s) => s.id);
      expect([...steps].sort()).toEqual(expect.arrayContaining(commandSteps.filter((id) => id !== 'nines' || f.name !== 'menu')));
    }
  });

  it('on the example flows (through the checker), 200 random calls each', async () => {
    const flows = await exampleFlows();
    expect(flows.length).toBeGreaterThanOrEqual(6);
    let effects = 0;
    for (const [i, f] of flows.entries()) effects += walk(f, 7 + i, 200).effects;
    expect(effects, 'the walk went through sms steps (voicemail)').toBeGreaterThan(0);
  });
});
