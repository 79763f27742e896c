/**
 * The queue step in `callscript simulate` (sim-queue.ts, sim-executor.ts): a poll is asked (ring which agent, wait,
 * timeout, empty, the store failing) and answered as a store answers, the caller's wait on the call's clock; leave
 * and done are answered at once; the transcript shows each operation; a caller script rings each agent once, then
 * finds the queue empty; the caller hanging up at a poll waits, then leaves the line.
 */
import { describe, expect, it } from 'vitest';
import { loadCallerScript } from '../../src/emulator/caller/load.js';
import { parseLine, render, ScriptedCaller, SimSession, type Question } from '../../src/testing/simulate.js';
import { BARE, compiled, LINE } from './queue-fixture.js';

const pick = (s: SimSession, line: string) => {
  const p = parseLine(s.question!, line);
  if (p.kind !== 'answer') throw new Error(JSON.stringify(p));
  return s.answer(p.answer);
};

describe('the queue step in the simulator', () => {
  it('asks the poll, shows each operation, and answers as a store does: the wait on the call clock', () => {
    const s = new SimSession(compiled(LINE), { now: Date.parse('2027-01-15T09:00:00Z') });
    const start = s.start();
    expect(start.filter((e) => e.kind === 'command').map((e) => render(e))).toEqual([
      '#1 greet: play\n  hears: "Welcome." (TTS_EN-GB_SERENA)\n',
    ]);
    const ev = pick(s, '');
    expect(ev.map((e) => render(e)).join('')).toBe(
      'wait_line: queue sales poll (agents +442079460001, +442079460002; waited 0 s)\n',
    );
    const q = s.question as Extract<Question, { kind: 'queue' }>;
    expect(q.kind).toBe('queue');
    expect(q.options.map((o) => `${o.key}) ${o.label}`)).toEqual([
      '1) ring +442079460001',
      '2) ring +442079460002',
      '3) wait',
      '4) timeout (max_wait 600 s)',
      '5) empty (no agent can take the call)',
      '6) error UNAVAILABLE (the store fails)',
    ]);
    // wait: the announcement (the first at once), with the place the store gave
    const announced = pick(s, '3');
    expect(announced.find((e) => e.kind === 'command')).toMatchObject({
      step: 'wait_line',
      command: 'play',
      hears: ['"You are number 1 in line." (TTS_EN-GB_SERENA)'],
    });
    expect(s.vars.place).toEqual({ result: 'wait', position: 1, expected_wait: 180, waited: 0, agents: 2, free: 0 });
    pick(s, '');
    expect((s.question as { waited: number }).waited).toBe(1); // 1 s more at each request
    pick(s, '2');
    expect(s.question).toMatchObject({ kind: 'menu', command: 'dialout' });
    const end = pick(s, '1'); // answered: bridged, the call ends
    expect(end.map((e) => render(e)).slice(0, 2)).toEqual(['wait_line: queue sales done\n', '  -> done (built-in)\n']);
    expect(s.path.map((p) => `${p.step} ${p.command} -> ${p.outcome ?? ''}`)).toEqual([
      'greet play -> 0',
      'wait_line queue -> wait (position 1, waited 0 s)',
      'wait_line play -> 0',
      'wait_line queue -> ring +442079460002',
      'wait_line dialout -> answered (bridged)',
      'wait_line queue -> done',
    ]);
    expect(end.at(-1)).toMatchObject({ kind: 'end', vars: { outcome: 'served' } });
  });

  it('timeout, empty and error take their branches', () => {
    const say = (answer: string) => {
      const s = new SimSession(compiled(LINE));
      s.start();
      pick(s, '');
      const ev = pick(s, answer);
      return ev.find((e) => e.kind === 'command') as { hears: string[] } | undefined;
    };
    expect(say('4')?.hears).toEqual(['"Nobody could take your call." (TTS_EN-GB_SERENA)']);
    expect(say('5')?.hears).toEqual(['"We are closed." (TTS_EN-GB_SERENA)']);
    expect(say('6')?.hears).toEqual(['"We are closed." (TTS_EN-GB_SERENA)']);
  });

  it('the end of input at a poll: the caller waits, then hangs up during the hold (leave: abandoned)', () => {
    const s = new SimSession(compiled(LINE));
    s.start();
    pick(s, '');
    const ev = s.hangUp();
    expect(ev.filter((e) => e.kind === 'queue' || e.kind === 'answered').map((e) => render(e))).toEqual([
      'wait_line: queue sales leave\n',
      '  -> left (built-in)\n',
    ]);
    expect(ev.at(-1)).toMatchObject({ kind: 'end', vars: { outcome: 'left' } });
  });

  it('a caller script rings each agent once, in turn, then finds the queue empty (as a store answers)', () => {
    const loaded = loadCallerScript('name: nobody answers\ndefaults:\n  dialout: noanswer\n', 'n.caller.yaml');
    if (!loaded.ok) throw new Error(JSON.stringify(loaded));
    const caller = new ScriptedCaller(loaded.script);
    const s = new SimSession(
      compiled(
        LINE.replace('["+442079460001", "+442079460002"]', '["+442079460001", "+442079460002", "+442079460003"]'),
      ),
    );
    s.start();
    const said: string[] = [];
    while (!s.ended && s.question) {
      const a = caller.answer(s.question);
      said.push(a.text);
      s.answer(a.answer);
    }
    expect(said).toEqual([
      '0',
      'ring +442079460001',
      'NOANSWER',
      'ring +442079460002',
      'NOANSWER',
      'ring +442079460003',
      'NOANSWER',
      'empty (no agent can take the call)',
      '0', // We are closed.
    ]);
    expect(s.path.filter((p) => p.command === 'queue').at(-1)).toEqual({
      step: 'wait_line',
      command: 'queue',
      outcome: 'empty',
    });
  });

  it('a queue of 1,000 agents offers the first nine to ring', () => {
    const agents = JSON.stringify(Array.from({ length: 1000 }, (_, i) => `+4420794${String(i).padStart(5, '0')}`));
    const s = new SimSession(compiled(BARE.replace('["+442079460009"]', agents)));
    s.start();
    const q = s.question as Extract<Question, { kind: 'queue' }>;
    expect(q.options.map((o) => o.label).slice(8, 10)).toEqual(['ring +442079400008', 'wait']);
    expect(q.options).toHaveLength(13);
    const shown = render({
      kind: 'queue',
      step: 'q',
      queue: 'help',
      op: 'poll',
      agents: JSON.parse(agents),
      waited: 0,
    });
    expect(shown).toBe(
      'q: queue help poll (agents +442079400000, +442079400001, +442079400002, +442079400003, +442079400004 ' +
        'and 995 more; waited 0 s)\n',
    );
  });
});
