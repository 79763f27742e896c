/**
 * Agents across live calls, in real time driven by the test (agents-time.ts): an agent rung while it rings or talks
 * for another call is an overlap (counted, AGENT_OVERLAP, NOANSWER); a queue of 20 callers and 5 agents run at once
 * against one server shows none; a hang-up from another call frees the agent at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentBehaviour } from '../../src/emulator/agents/behaviour.js';
import type { Transcript } from '../../src/emulator/driver/transcript.js';
import { drive, manualTime, settled, T0, type ManualTime } from './agents-time.js';
import { cmd, fakeServer, startEmulator, type Running } from './helpers.js';

const X = '+447700900001';
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const agent = (b: Partial<AgentBehaviour> = {}): AgentBehaviour => ({ answer: true, answerAfterS: 3, talkS: 60, ...b });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function live(agents: [string, AgentBehaviour][]): Promise<{ e: Running; time: ManualTime }> {
  const time = manualTime();
  const e = await startEmulator({
    agents: new Map(agents),
    realtime: true,
    clock: time.clock,
    sleep: time.sleep,
    maxLiveCalls: 50,
  });
  open.push(e);
  return { e, time };
}

/** The callid of a request, digit for digit (it may be beyond 2^53). */
const callidOf = (body: string) => /"callid":(\d+)/.exec(body)![1]!;

async function place(e: Running, url: string): Promise<{ id: string; callid: string }> {
  const r = await e.req('/emulator/calls', { body: { url, wait: false } });
  expect(r.status).toBe(202);
  return r.json;
}
const transcript = async (e: Running, id: string) => (await e.req(`/emulator/calls/${id}`)).json as Transcript;
const agents = async (e: Running) => (await e.req('/emulator/agents')).json;

describe('overlaps: an agent rung twice at once', () => {
  it('while it rings for another call: counted, a warning in that call, NOANSWER after the timeout', async () => {
    const { e, time } = await live([[X, agent()]]);
    const s = await fakeServer((r) =>
      r.json.command === ''
        ? { body: cmd('dialout', 1, { targets: [{ number: X, timeout: 20 }] }) }
        : { body: cmd('hangup', 2) },
    );
    open.push(s);
    const a = await place(e, s.url);
    await settled(e.emu, time);
    expect(await agents(e)).toEqual([
      {
        number: X,
        answer: true,
        answer_after: 3,
        talk: 60,
        state: 'ringing',
        call: a.id,
        callid: a.callid,
        since: iso(0),
        rung: 1,
        answered: 0,
        missed: 0,
        overlaps: 0,
      },
    ]);
    const b = await place(e, s.url);
    await settled(e.emu, time);
    expect((await agents(e))[0]).toMatchObject({ state: 'ringing', call: a.id, rung: 2, overlaps: 1, missed: 0 });
    time.next(); // +3 s: X answers A
    await settled(e.emu, time);
    expect((await agents(e))[0]).toMatchObject({ state: 'talking', call: a.id, since: iso(3000), answered: 1 });
    await drive(e.emu, time);
    const tb = await transcript(e, b.id);
    expect(tb.commands.map((c) => [c.command, c.result, c.duration_ms, c.caller])).toEqual([
      ['dialout', 'NOANSWER', 20_000, `agent ${X} is busy (ringing for call ${a.id}): did not answer (20 s)`],
      ['hangup', '', 0, 'the server hung up'],
    ]);
    expect(tb.warnings).toEqual([
      {
        request: 1,
        code: 'AGENT_OVERLAP',
        message: `agent ${X} was rung while ringing for another call (${a.id}, callid ${a.callid}): it does not answer`,
      },
    ]);
    const ta = await transcript(e, a.id);
    expect(ta).toMatchObject({ ended_by: 'bridge', duration_ms: 63_000, warnings: [] });
    expect(await agents(e)).toEqual([
      {
        number: X,
        answer: true,
        answer_after: 3,
        talk: 60,
        state: 'free',
        rung: 2,
        answered: 1,
        missed: 1,
        overlaps: 1,
      },
    ]);
  });

  it('while it talks on another call; free again once that bridge ends, it answers the next ring', async () => {
    const { e, time } = await live([[X, agent({ answerAfterS: 2, talkS: 20 })]]);
    // the first call dials at once; the others wait 10 s (while X talks), or 30 s (once X is free), then dial
    const delays = [0, 10, 30];
    const s = await fakeServer((r) => {
      const j = r.json;
      if (j.call_status !== 'UP') return { body: cmd('hangup', 9) };
      if (j.command === '') {
        const d = delays.shift()!;
        return {
          body: d === 0 ? cmd('dialout', 2, { targets: [{ number: X, timeout: 15 }] }) : cmd('wait', 1, { wait: d }),
        };
      }
      if (j.command === 'wait') return { body: cmd('dialout', 2, { targets: [{ number: X, timeout: 15 }] }) };
      return { body: cmd('hangup', 3) };
    });
    open.push(s);
    const calls = [];
    for (let i = 0; i < 3; i++) {
      calls.push(await place(e, s.url));
      await settled(e.emu, time);
    }
    await drive(e.emu, time);
    const [ta, tb, tc] = await Promise.all(calls.map((c) => transcript(e, c.id)));
    expect(ta!.ended_by).toBe('bridge');
    expect(tb!.commands[1]).toMatchObject({
      command: 'dialout',
      at_ms: 10_000,
      result: 'NOANSWER',
      caller: `agent ${X} is busy (talking on call ${calls[0]!.id}): did not answer (15 s)`,
    });
    expect(tb!.warnings.map((w) => w.code)).toEqual(['AGENT_OVERLAP']);
    expect(tc!.commands[1]).toMatchObject({ at_ms: 30_000, result: '', duration_ms: 22_000 });
    expect(tc!.warnings).toEqual([]);
    expect((await agents(e))[0]).toMatchObject({ state: 'free', rung: 3, answered: 2, missed: 1, overlaps: 1 });
  });

  it('a hangup_callid from another call ends a bridged call at once: its agent is free at once', async () => {
    const { e, time } = await live([[X, agent()]]);
    const s = await fakeServer((r) =>
      r.json.command === ''
        ? { body: cmd('dialout', 1, { targets: [{ number: X, timeout: 20 }] }) }
        : { body: cmd('hangup', 2) },
    );
    open.push(s);
    const a = await place(e, s.url);
    await settled(e.emu, time);
    time.next(); // answered: talking
    await settled(e.emu, time);
    expect((await agents(e))[0]).toMatchObject({ state: 'talking', call: a.id });
    const killer = await fakeServer((r) =>
      r.json.command === ''
        ? { body: `{"command":"hangup_callid","command_id":1,"params":{"callid":${a.callid}},"variables":{}}` }
        : { body: cmd('hangup', 2) },
    );
    open.push(killer);
    const k = await e.req('/emulator/calls', { body: { url: killer.url, realtime: false } });
    expect(k.json.commands[0].caller).toBe(`call ${a.callid} (${a.id}) was hung up`);
    await Promise.allSettled([...e.emu.ctx.background]);
    const ta = await transcript(e, a.id);
    expect(ta).toMatchObject({ ended_by: 'hangup_callid', duration_ms: 3000 });
    expect(ta.commands[0]).toMatchObject({
      status: 'interrupted',
      caller: `agent ${X} answered after 3 s; bridged 0 s; interrupted: hangup_callid from call ${k.json.callid}`,
    });
    expect((await agents(e))[0]).toMatchObject({ state: 'free', rung: 1, answered: 1, missed: 0 });
  });
});

describe('a queue on a laptop: 20 callers, 5 agents, one server, all at once', () => {
  const AGENTS = [1, 2, 3, 4, 5].map((i) => `+4477009001${i}0`);

  /**
   * A customer server that plays a queue: a caller is offered a free agent it has not tried (dialout, 20 s), else
   * waits 5 s and asks again; a NOANSWER frees the agent, the terminal HANGUP of a bridged call too.
   * `honest: false` offers the first agent whatever its state (the bug a queue test is for), and hangs up on NOANSWER.
   */
  async function queueServer(honest: boolean) {
    const busy = new Set<string>();
    const holding = new Map<string, string>();
    const tried = new Map<string, Set<string>>();
    const s = await fakeServer((r) => {
      const callid = callidOf(r.body);
      const j = r.json;
      const mine = holding.get(callid);
      if (mine && (j.call_status !== 'UP' || j.command === 'dialout')) {
        busy.delete(mine);
        holding.delete(callid);
      }
      if (j.call_status !== 'UP' || (!honest && j.command === 'dialout')) return { body: cmd('hangup', 99) };
      const seen = tried.get(callid) ?? new Set<string>();
      tried.set(callid, seen);
      const next = honest ? AGENTS.find((a) => !busy.has(a) && !seen.has(a)) : AGENTS[0];
      if (next === undefined) return { body: cmd('wait', Number(j.command_id) + 1, { wait: 5 }) };
      busy.add(next);
      seen.add(next);
      holding.set(callid, next);
      return { body: cmd('dialout', Number(j.command_id) + 1, { targets: [{ number: next, timeout: 20 }] }) };
    });
    open.push(s);
    return s;
  }

  it('a server that offers free agents only: every caller bridged, no agent rung twice at once', async () => {
    const { e, time } = await live(
      AGENTS.map((n, i) => [
        n,
        i === 4 ? agent({ answer: false }) : agent({ answerAfterS: 2 + i, talkS: 30 + 15 * i }),
      ]),
    );
    const s = await queueServer(true);
    const calls = await Promise.all(Array.from({ length: 20 }, () => place(e, s.url)));
    let peak = 0;
    await drive(e.emu, time, () => (peak = Math.max(peak, e.emu.ctx.live.size)));
    expect(peak).toBe(20);
    const ts = await Promise.all(calls.map((c) => transcript(e, c.id)));
    expect(ts.map((t) => t.ended_by)).toEqual(Array(20).fill('bridge'));
    expect(ts.flatMap((t) => t.warnings)).toEqual([]);
    const view = await agents(e);
    expect(view.map((a: { overlaps: number }) => a.overlaps)).toEqual([0, 0, 0, 0, 0]);
    expect(view.map((a: { state: string }) => a.state)).toEqual(Array(5).fill('free'));
    expect(view.reduce((n: number, a: { answered: number }) => n + a.answered, 0)).toBe(20);
    expect(view[4]).toMatchObject({ answered: 0, rung: view[4].missed });
  });

  it('with real timers at --speed 1000 (a 60 s talk lasts 60 ms): the same, no overlap', async () => {
    const e = await startEmulator({
      agents: new Map(AGENTS.map((n, i) => [n, agent({ answerAfterS: 1 + i, talkS: 20 + 10 * i })])),
      realtime: true,
      speed: 1000,
    });
    open.push(e);
    const s = await queueServer(true);
    const calls = await Promise.all(Array.from({ length: 20 }, () => place(e, s.url)));
    await Promise.allSettled([...e.emu.ctx.background]);
    const ts = await Promise.all(calls.map((c) => transcript(e, c.id)));
    expect(ts.map((t) => t.ended_by)).toEqual(Array(20).fill('bridge'));
    expect(ts.flatMap((t) => t.warnings)).toEqual([]);
    const view = await agents(e);
    expect(view.reduce((n: number, a: { answered: number }) => n + a.answered, 0)).toBe(20);
    expect(view.map((a: { overlaps: number }) => a.overlaps)).toEqual([0, 0, 0, 0, 0]);
  });

  it('a server that rings the first agent for everyone: 19 overlaps, one caller bridged', async () => {
    const { e, time } = await live(AGENTS.map((n) => [n, agent()]));
    const s = await queueServer(false);
    const calls = await Promise.all(Array.from({ length: 20 }, () => place(e, s.url)));
    await drive(e.emu, time);
    const ts = await Promise.all(calls.map((c) => transcript(e, c.id)));
    expect(ts.filter((t) => t.warnings.some((w) => w.code === 'AGENT_OVERLAP'))).toHaveLength(19);
    expect((await agents(e))[0]).toMatchObject({ rung: 20, answered: 1, missed: 19, overlaps: 19, state: 'free' });
  });
});
