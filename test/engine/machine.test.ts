/**
 * The one runtime: the flow's xstate machine decides every step.
 * - src/engine/machine.ts is the only importer of xstate;
 * - the adapter's reused actor scope gives what xstate's public API gives (initialTransition,
 *   transition), on seeded random calls of every example flow;
 * - a decision changed in the machine config is what the engine does (nothing else decides);
 * - every request that feeds a result steps the machine exactly once;
 * - seeded random calls of every example flow keep the protocol rules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor, initialTransition } from 'xstate';
import { advance, replyCommand } from '../../src/engine/advance.js';
import { newRun, type Ctx } from '../../src/engine/behaviour.js';
import { fromConfig, type CompiledFlow } from '../../src/engine/compile.js';
import type { FlowSnapshot } from '../../src/engine/machine.js';
import type { CallState } from '../../src/engine/types.js';
import { ACTION_SPECS, isAction } from '../../src/flow/actions.js';
import { CALL_STATE } from '../../src/flow/machine-config.js';
import { checkReply } from '../../src/emulator/driver/conformance.js';
import { OPTS, req } from './helpers.js';
import { exampleFlows } from './yaml.js';
import { pick, rng } from '../helpers/random.js';

const root = new URL('../..', import.meta.url).pathname;

/** A result the outstanding command could return (the catalogue's set, and some noise). */
function randomResult(r: () => number, command: string): string {
  const spec = isAction(command) ? ACTION_SPECS[command].results : undefined;
  const noise = ['0', '1', '2', '3', '9', '12', '1234', 'TIMEOUT', '#', ''];
  if (!spec || r() < 0.15) return pick(r, noise);
  switch (spec.kind) {
    case 'enum':
      return pick(r, spec.values);
    case 'digits':
      return r() < 0.3 ? pick(r, spec.also) : String(Math.floor(r() * 10)).repeat(1 + Math.floor(r() * 2));
    case 'any':
      return pick(r, noise);
    case 'none':
      return '';
  }
}

function walkSrc(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walkSrc(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('the xstate adapter', () => {
  it('is the only module of src/ that imports xstate', () => {
    const importers = walkSrc(join(root, 'src'))
      .filter((f) => /from\s+['"]xstate['"/]|import\(\s*['"]xstate/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(root.length));
    expect(importers).toEqual(['src/engine/machine.ts']);
  });

  it('pins xstate to one exact version', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies.xstate).toMatch(/^\d+\.\d+\.\d+$/);
  });

  const persisted = (s: FlowSnapshot) => {
    const { rt: _rt, ...rest } = s.context as Ctx;
    return { value: s.value, status: s.status, context: rest };
  };

  /**
   * xstate's public API, with the actions run when they happen: the engine's actions write the context of the
   * macrostep under way (plain actions, not `assign`), as a started actor runs them. The initial snapshot: xstate's
   * `initialTransition`, its actions run in order afterwards; a step: a started actor restored at the state, `send`.
   */
  const publicStart = (f: CompiledFlow, input: { vars: Record<string, unknown>; rt: unknown }): FlowSnapshot => {
    const [snap, actions] = initialTransition(f.machine.machine, input);
    for (const a of actions as { exec?: (info: unknown, params: unknown) => void; info: unknown; params: unknown }[])
      a.exec?.(a.info, a.params);
    return snap as FlowSnapshot;
  };
  const publicSend = (f: CompiledFlow, snap: FlowSnapshot, ev: { type: string }): FlowSnapshot => {
    const actor = createActor(f.machine.machine, { snapshot: snap }).start();
    actor.send(ev);
    const next = actor.getSnapshot() as FlowSnapshot;
    actor.stop();
    return next;
  };

  it(
    "steps each example flow as xstate's public API does (initialTransition, a started actor's send; seeded " +
      'random calls)',
    async () => {
      const flows = await exampleFlows();
      expect(flows.length).toBeGreaterThanOrEqual(6);
      for (const f of flows) {
        const r = rng(7);
        for (let call = 0; call < 40; call++) {
          const request = req({ cli_number: pick(r, ['+33612345678', '+447700900123', '']) });
          const vars = f.tables.initialVars;
          let ours = f.machine.start(vars, newRun(request, 100, f.model.start, undefined));
          const theirsStart = publicStart(f, { vars, rt: newRun(request, 100, f.model.start, undefined) });
          expect(persisted(ours), `${f.name} start`).toEqual(persisted(theirsStart));
          for (let n = 0; n < 25; n++) {
            const state = f.machine.stateOf(ours);
            const meta = f.config.states[state]?.meta;
            if (!meta || meta.kind === 'end' || (meta.kind === 'command' && meta.final)) break;
            const command = meta.kind === 'command' ? meta.command : 'play';
            const ev =
              r() < 0.1
                ? { type: 'error', result: '', error: 'FAILED' }
                : { type: 'result', result: randomResult(r, command), error: '' };
            const ctx = ours.context as Ctx;
            ours = f.machine.send(
              f.machine.restore(state, { ...ctx, h: 0 }, newRun(request, 100, state, undefined)),
              ev,
            );
            const theirs = publicSend(
              f,
              f.machine.restore(state, { ...ctx, h: 0 }, newRun(request, 100, state, undefined)),
              ev,
            );
            expect(persisted(ours), `${f.name} call ${call} request ${n}: ${JSON.stringify(ev)} at ${state}`).toEqual(
              persisted(theirs),
            );
          }
        }
      }
    },
  );

  it('never changes a snapshot it was given, nor the state a call is restored from', async () => {
    const fd = (await exampleFlows()).find((f) => f.name === 'front-desk')!;
    const request = req({ cli_number: '+447700900123', date_started: '2026-11-23 10:00:00' });
    const run = () => newRun(request, 100, 'menu', undefined);
    const p = { vars: { ...fd.tables.initialVars }, c: { n: 1, r: {} }, res: '', err: '', k: 1, h: 0 as const };
    const before = structuredClone(p);
    const a = fd.machine.restore('menu', p, run());
    const kept = structuredClone(persisted(a));
    // TIMEOUT retries the menu (its counters and escalation change), "0" goes to the operator
    const retried = fd.machine.send(a, { type: 'result', result: 'TIMEOUT', error: '' });
    expect((retried.context as Ctx).c).not.toEqual(p.c);
    expect(persisted(a)).toEqual(kept);
    expect(p).toEqual(before);
    // the same state restored again (from the same template) starts from the call's own context only
    const b = fd.machine.restore('menu', p, run());
    expect(persisted(b)).toEqual(kept);
    const sent = fd.machine.send(b, { type: 'result', result: '0', error: '' });
    expect(fd.machine.stateOf(sent)).not.toBe('menu');
    expect(persisted(b)).toEqual(kept);
    expect(persisted(a)).toEqual(kept);
  });

  it('keeps the flow states inside one compound state (per-step cost independent of the flow size)', async () => {
    const [f] = await exampleFlows();
    const s = f!.machine.start(f!.tables.initialVars, newRun(req(), 100, f!.model.start, undefined));
    expect(Object.keys(s.value as object)).toEqual([CALL_STATE]);
  });
});

describe('the machine decides', () => {
  it('a transition target changed in the machine config is where the call goes', async () => {
    const flows = await exampleFlows();
    const fd = flows.find((f) => f.name === 'front-desk')!;
    const config = structuredClone(fd.config);
    const menu = config.states.menu!;
    const one = menu.on!.result!.find((t) => t.guard?.params?.exact === '1')!;
    expect(one.target).not.toBe('operator');
    one.target = 'operator';
    const changed: CompiledFlow = fromConfig({ name: fd.name, version: fd.version, model: fd.model, config });
    // Walk both to the menu, then press 1.
    const walk = (f: CompiledFlow) => {
      let out = advance(f, undefined, req({ cli_number: '+447700900123', date_started: '2026-11-23 10:00:00' }), OPTS);
      for (let i = 0; i < 5 && out.kind === 'reply' && out.state && out.state.s !== 'menu'; i++) {
        out = advance(
          f,
          out.state,
          req({ command: replyCommand(out.state.reply), command_id: out.state.commandId, command_result: '0' }),
          OPTS,
        );
      }
      if (out.kind !== 'reply' || !out.state) throw new Error('no menu');
      expect(out.state.s).toBe('menu');
      return advance(
        f,
        out.state,
        req({ command: 'read', command_id: out.state.commandId, command_result: '1' }),
        OPTS,
      );
    };
    const a = walk(fd);
    const b = walk(changed);
    expect(a.kind === 'reply' && a.state?.step).not.toBe('operator');
    expect(b.kind === 'reply' && b.state?.step).toBe('operator');
    expect(b.kind === 'reply' && b.reply.command).toBe('dialout');
  });

  it('every request that feeds a result steps the machine once; replays and stale requests never', async () => {
    const flows = await exampleFlows();
    const fd = flows.find((f) => f.name === 'front-desk')!;
    let sends = 0;
    const counted: CompiledFlow = {
      ...fd,
      machine: { ...fd.machine, send: (s, e) => (sends++, fd.machine.send(s, e)) },
    };
    const first = advance(counted, undefined, req({ cli_number: '+447700900123' }), OPTS);
    expect(sends).toBe(0); // the start is the machine's initial snapshot
    const s1 = (first as { state: CallState }).state;
    const second = advance(
      counted,
      s1,
      req({ command: replyCommand(s1.reply), command_id: s1.commandId, command_result: '0' }),
      OPTS,
    );
    expect(sends).toBe(1);
    const s2 = (second as { state: CallState }).state;
    // retry
    advance(counted, s2, req({ command: replyCommand(s1.reply), command_id: s1.commandId, command_result: '0' }), OPTS);
    advance(counted, s2, req({ command: 'play', command_id: 0, command_result: '0' }), OPTS); // stale
    expect(sends).toBe(1);
    advance(
      counted,
      s2,
      req({ command: replyCommand(s2.reply), command_id: s2.commandId, call_status: 'HANGUP' }),
      OPTS,
    );
    expect(sends).toBe(2); // call.end
  });
});

describe('seeded random calls of every example flow keep the protocol rules', () => {
  it('valid commands, command ids one by one, identical replays, small states, no internal error, an end', async () => {
    const flows = await exampleFlows();
    for (const f of flows) {
      const r = rng(42);
      for (let call = 0; call < 60; call++) {
        const base = {
          cli_number: pick(r, ['+33612345678', '+447700900123', '+14155550123', '']),
          date_started: pick(r, ['2026-11-23 10:00:00', '2026-11-22 03:00:00']),
          variables: { crm: 'C-1' },
          variablesRaw: '{"crm":"C-1"}',
        };
        let out = advance(f, undefined, req(base), OPTS);
        let prior: CallState | undefined;
        let ended = false;
        for (let n = 0; n < 60 && !ended; n++) {
          while (out.kind === 'effect')
            out = out.resume(r() < 0.2 ? { ok: false, error: 'FAILED' } : { ok: true, value: 'SMS00001' });
          const where = `${f.name} call ${call} request ${n}`;
          expect(out.kind, where).toBe('reply');
          if (out.kind !== 'reply') break;
          expect(
            out.log?.find((l) => l.code === 'ENGINE_INTERNAL'),
            where,
          ).toBeUndefined();
          const checked = checkReply(
            { kind: 'reply', status: 200, contentType: 'application/json', text: out.replyJson, ms: 1 },
            4000,
          );
          expect(checked.ok ? [] : checked.violations, where).toEqual([]);
          expect(out.reply.command_id, where).toBe((prior?.commandId ?? 0) + 1);
          if (!out.state) break;
          expect(JSON.stringify(out.state).length, where).toBeLessThan(2048);
          const state: CallState = out.state;
          // A retried request gets the same bytes and changes nothing.
          const again = advance(
            f,
            state,
            req({ ...base, command: prior ? replyCommand(prior.reply) : '', command_id: prior?.commandId ?? 0 }),
            OPTS,
          );
          if (prior)
            expect(again, where).toEqual({
              kind: 'replay',
              replyJson: out.replyJson.replace(/"variables":.*$/, '"variables":{"crm":"C-1"}}'),
            });
          prior = state;
          const roll = r();
          const next = req({ ...base, command: replyCommand(state.reply), command_id: state.commandId });
          if (state.done || roll < 0.04) {
            out = advance(f, state, { ...next, call_status: pick(r, ['HANGUP', 'NOANSWER', 'BUSY']) }, OPTS);
            while (out.kind === 'effect') out = out.resume({ ok: true, value: 'SMS00002' }); // the hangup handler's sms
            expect(out.kind === 'reply' && out.state, where).toBeNull();
            expect(out.kind === 'reply' && out.reply.command, where).toBe('hangup');
            ended = true;
          } else if (roll < 0.1) {
            out = advance(f, state, { ...next, command_error: 'FAILED' }, OPTS);
          } else {
            out = advance(f, state, { ...next, command_result: randomResult(r, replyCommand(state.reply)) }, OPTS);
          }
        }
      }
    }
  });
});
