/**
 * Dialouts to the emulator's agents (docs/emulator.md "Agents"): the agents table decides them (bridged, NOANSWER,
 * too late), a caller script's explicit outcome wins over it, the call's hang-up frees the agent, and --speed
 * scales real-time waits. In simulated time here; real time with overlaps and many calls: agents-live.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentBehaviour } from '../../src/emulator/agents/behaviour.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import { drive, manualTime } from './agents-time.js';
import { cmd, fakeServer, startEmulator, type Running } from './helpers.js';

const X = '+447700900001';
const Y = '+447700900002';
const OTHER = '+442079460999';
const agent = (b: Partial<AgentBehaviour> = {}): AgentBehaviour => ({
  answer: true,
  answerAfterS: 3,
  talkS: 60,
  ...b,
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function emulator(agents: [string, AgentBehaviour][], opts: Parameters<typeof startEmulator>[0] = {}) {
  const e = await startEmulator({ agents: new Map(agents), ...opts });
  open.push(e);
  return e;
}

/** A server whose flows send one dialout (to `targets`), then hang up; its requests on the wire. */
async function dialing(targets: object[], extra: object = {}) {
  const s = await fakeServer((r) =>
    r.json.command === '' ? { body: cmd('dialout', 1, { targets, ...extra }) } : { body: cmd('hangup', 2) },
  );
  open.push(s);
  const wire = () => s.seen.map((x) => [x.json.call_status, x.json.command, x.json.command_id, x.json.command_result]);
  return { url: s.url, wire };
}

const agents = async (e: Running) => (await e.req('/emulator/agents')).json;
const dialout = (t: Transcript) => t.commands[0]!;

describe('a dialout to an agent', () => {
  it('that answers: bridged after answer_after, talks, then the call ends with HANGUP carrying dialout', async () => {
    const e = await emulator([[X, agent()]]);
    const s = await dialing([{ number: X, timeout: 20 }]);
    const t = await e.call({ url: s.url });
    expect(dialout(t)).toMatchObject({
      command: 'dialout',
      at_ms: 0,
      duration_ms: 63_000,
      result: '',
      error: '',
      caller: `agent ${X} answered after 3 s; bridged 60 s; the agent hung up`,
      status: 'done',
    });
    expect(t).toMatchObject({
      ended_by: 'bridge',
      end_reason: 'the dialout was answered and bridged; the callee hung up',
      duration_ms: 63_000,
      warnings: [],
      violations: [],
    });
    expect(t.final).toMatchObject({
      call_status: 'HANGUP',
      command: 'dialout',
      command_id: 1,
      command_result: '',
      command_error: '',
    });
    expect(s.wire()).toEqual([
      ['UP', '', 0, ''],
      ['HANGUP', 'dialout', 1, ''],
    ]);
    expect(await agents(e)).toEqual([
      {
        number: X,
        answer: true,
        answer_after: 3,
        talk: 60,
        state: 'free',
        rung: 1,
        answered: 1,
        missed: 0,
        overlaps: 0,
      },
    ]);
  });

  it('that never answers (answer: false): NOANSWER after the target timeout, and the flow goes on', async () => {
    const e = await emulator([[X, agent({ answer: false })]]);
    const s = await dialing([{ number: X, timeout: 20 }]);
    const t = await e.call({ url: s.url });
    expect(dialout(t)).toMatchObject({
      duration_ms: 20_000,
      result: 'NOANSWER',
      caller: `agent ${X} never answers: did not answer (20 s)`,
    });
    expect(t).toMatchObject({ ended_by: 'flow', duration_ms: 20_000, warnings: [] });
    expect(s.wire()).toEqual([
      ['UP', '', 0, ''],
      ['UP', 'dialout', 1, 'NOANSWER'],
      ['HANGUP', 'hangup', 2, ''],
    ]);
    expect((await agents(e))[0]).toMatchObject({ answer: false, state: 'free', rung: 1, answered: 0, missed: 1 });
    expect((await agents(e))[0]).not.toHaveProperty('answer_after');
  });

  it.each([
    [25, 20],
    [20, 20],
  ])('that answers after %i s when the timeout is %i s: NOANSWER after the timeout', async (after, timeout) => {
    const e = await emulator([[X, agent({ answerAfterS: after })]]);
    const s = await dialing([{ number: X, timeout }]);
    const t = await e.call({ url: s.url });
    expect(dialout(t)).toMatchObject({
      duration_ms: timeout * 1000,
      result: 'NOANSWER',
      caller: `agent ${X} answers after ${after} s, not within the timeout: did not answer (${timeout} s)`,
    });
    expect((await agents(e))[0]).toMatchObject({ rung: 1, answered: 0, missed: 1, overlaps: 0 });
  });

  it('targets in order: an unknown number rings its timeout (AGENT_UNKNOWN), then the agent; a whisper', async () => {
    const e = await emulator([
      [X, agent({ answer: false })],
      [Y, agent({ answerAfterS: 4.5, talkS: 90 })],
    ]);
    const s = await dialing(
      [
        { number: OTHER, timeout: 10 },
        { number: X, timeout: 15 },
        { number: Y, timeout: 30 },
      ],
      { whisper: 'TTS|TTS_EN-GB_SERENA|A caller from the queue' },
    );
    const t = await e.call({ url: s.url });
    expect(dialout(t)).toMatchObject({
      duration_ms: 10_000 + 15_000 + 4_500 + 2_000 + 90_000,
      result: '',
      caller:
        `${OTHER} (not an agent) did not answer (10 s); agent ${X} never answers: did not answer (15 s); ` +
        `agent ${Y} answered after 4.5 s; bridged 90 s (after the whisper, 2 s); the agent hung up`,
    });
    expect(t.warnings).toEqual([
      {
        request: 1,
        code: 'AGENT_UNKNOWN',
        message: `${OTHER} is not in the agents table (a dialout to agents): it does not answer`,
      },
    ]);
    expect(t.ended_by).toBe('bridge');
  });

  it('a dialout to numbers none of which is an agent: the caller script decides, as before', async () => {
    const e = await emulator([[X, agent()]]);
    const s = await dialing([{ number: OTHER, timeout: 20 }]);
    const t = await e.call({ url: s.url });
    expect(dialout(t)).toMatchObject({ caller: `${OTHER} answered after 5 s; bridged 30 s; the callee hung up` });
    expect((await agents(e))[0]).toMatchObject({ rung: 0 });
  });

  it('the caller hangs up while bridged (call.hangup_at): the agent is free again; ended by the caller', async () => {
    const e = await emulator([[X, agent()]]);
    const s = await dialing([{ number: X, timeout: 20 }]);
    const t = await e.call({ url: s.url, caller: { call: { hangup_at: 30 } } });
    expect(dialout(t)).toMatchObject({
      status: 'interrupted',
      duration_ms: 30_000,
      caller: `agent ${X} answered after 3 s; bridged 27 s; hung up 30 s into the call`,
    });
    expect(t).toMatchObject({ ended_by: 'caller', end_reason: 'the caller hung up at 30 s (call.hangup_at)' });
    expect(s.wire().at(-1)).toEqual(['HANGUP', 'dialout', 1, '']);
    expect((await agents(e))[0]).toMatchObject({ state: 'free', rung: 1, answered: 1, missed: 0 });
    // while it rings: a missed ring
    const t2 = await e.call({ url: s.url, caller: { call: { hangup_at: 2 } } });
    expect(dialout(t2).caller).toBe(`agent ${X} rang 2 s; hung up 2 s into the call`);
    expect((await agents(e))[0]).toMatchObject({ state: 'free', rung: 2, answered: 1, missed: 1 });
  });
});

describe("precedence: the caller script's explicit outcome for that dialout wins", () => {
  it('an action dialout: noanswer, a scripted answer, an error: the agents table is not asked', async () => {
    const e = await emulator([[X, agent()]]);
    const s = await dialing([{ number: X, timeout: 20 }]);
    const a = await e.call({ url: s.url, caller: { actions: [{ dialout: 'noanswer' }] } });
    expect(dialout(a)).toMatchObject({ result: 'NOANSWER', caller: `${X} did not answer (20 s)` });
    const b = await e.call({ url: s.url, caller: { actions: [{ dialout: { answer: 1, ring: 1, talk: 5 } }] } });
    expect(dialout(b)).toMatchObject({
      duration_ms: 6000,
      caller: `${X} answered after 1 s; bridged 5 s; the callee hung up`,
    });
    const c = await e.call({ url: s.url, caller: { actions: [{ error: 'CALL_FAILED' }] } });
    expect(dialout(c)).toMatchObject({ result: '', error: 'CALL_FAILED' });
    expect((await agents(e))[0]).toMatchObject({ rung: 0, answered: 0, missed: 0 });
  });

  it("defaults.dialout is no explicit outcome: the agents table decides (it knows the number's agent)", async () => {
    const e = await emulator([[X, agent({ answerAfterS: 0, talkS: 1 })]]);
    const s = await dialing([{ number: X, timeout: 20 }]);
    const t = await e.call({ url: s.url, caller: { defaults: { dialout: 'noanswer' } } });
    expect(dialout(t)).toMatchObject({ caller: `agent ${X} answered after 0 s; bridged 1 s; the agent hung up` });
    expect(t.ended_by).toBe('bridge');
  });

  it('the action is used by the first dialout only; the next one is the agents table again', async () => {
    const e = await emulator([[X, agent()]]);
    const s = await fakeServer((r, n) => {
      if (r.json.call_status !== 'UP') return { body: cmd('hangup', 9) };
      return { body: cmd('dialout', n, { targets: [{ number: X, timeout: 20 }] }) };
    });
    open.push(s);
    const t = await e.call({ url: s.url, caller: { actions: [{ dialout: 'noanswer' }] } });
    expect(t.commands.map((c) => [c.result, c.caller])).toEqual([
      ['NOANSWER', `${X} did not answer (20 s)`],
      ['', `agent ${X} answered after 3 s; bridged 60 s; the agent hung up`],
    ]);
    expect(t.unused_actions).toEqual([]);
  });
});

describe('--speed', () => {
  it('real time x10: every wait sleeps a tenth (the dialout by phases); the transcript keeps call time', async () => {
    const time = manualTime();
    const e = await emulator([[X, agent()]], { realtime: true, speed: 10, clock: time.clock, sleep: time.sleep });
    const s = await fakeServer((r) => {
      if (r.json.command === '') return { body: cmd('wait', 1, { wait: 10 }) };
      if (r.json.command === 'wait') return { body: cmd('dialout', 2, { targets: [{ number: X, timeout: 20 }] }) };
      return { body: cmd('hangup', 3) };
    });
    open.push(s);
    const placed = await e.req('/emulator/calls', { body: { url: s.url, wait: false } });
    expect(placed.status).toBe(202);
    await drive(e.emu, time);
    expect(time.asked).toEqual([1000, 300, 6000]);
    const t = (await e.req(`/emulator/calls/${placed.json.id}`)).json as Transcript;
    expect(t.commands.map((c) => [c.command, c.at_ms, c.duration_ms])).toEqual([
      ['wait', 0, 10_000],
      ['dialout', 10_000, 63_000],
    ]);
    expect(t.duration_ms).toBe(73_000);
  });

  it('is checked: 1 to 1000', async () => {
    await expect(startEmulator({ speed: 0 })).rejects.toThrow('speed must be a number from 1 to 1000, got 0');
    await expect(startEmulator({ speed: 1001 })).rejects.toThrow('speed must be a number from 1 to 1000, got 1001');
    await expect(startEmulator({ speed: Number.NaN })).rejects.toThrow('got NaN');
  });
});
