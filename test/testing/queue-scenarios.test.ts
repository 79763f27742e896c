/**
 * The queue step in `callscript test` (docs/testing.md "Queues"): a case's queues run on the memory store's own
 * lines at the case's clock, with callers ahead, agents busy or paused, served and freed as the steps say; the
 * announcements, the dialout to the agent claimed and the branch taken are what the case expects; a queue
 * operation may be a step of its own, answered by its `answer:`; coverage counts the queue's keys.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Coverage, parseScenario, runCase, type CaseResult } from '../../src/testing/index.js';
import { checkQueueNames } from '../../src/testing/check-queues.js';
import { BARE, compiled, LINE } from './queue-fixture.js';

const TTS = (t: string) => `"TTS|TTS_EN-GB_SERENA|${t}"`;
const play = (t: string) => `{ command: play, params: { media_id: ${TTS(t)} } }`;
const dial = (n: string) => `{ command: dialout, params: { targets: [{ number: "${n}", timeout: 15 }] } }`;
const A = '+442079460001';
const B = '+442079460002';
const T0 = Date.parse('2027-01-15T09:00:00Z');
const at = (s: number) => `"${new Date(T0 + s * 1000).toISOString()}"`;

/** One case of the LINE flow: its extra keys (queues:, expect:...) then its steps. */
function scenario(steps: string[], extra: string[] = [], flow = 'line'): string {
  return [
    `flow: ${flow}`,
    'cases:',
    '  - name: c',
    `    mocks: { now: ${at(0)} }`,
    ...extra.map((l) => `    ${l}`),
    '    steps:',
    ...steps.map((l) => `      ${l}`),
    '',
  ].join('\n');
}

function run(text: string, flowText = LINE, wholeParams = false): CaseResult {
  const s = parseScenario(text, 's.test.yaml');
  return runCase(compiled(flowText), s.cases[0]!, wholeParams ? { wholeParams } : {});
}

const problems = (text: string): string[] => {
  try {
    parseScenario(text, 's.test.yaml');
    return [];
  } catch (e) {
    return (e as { errors: { line: number; column: number; message: string }[] }).errors.map(
      (x) => `${x.line}:${x.column}: ${x.message}`,
    );
  }
};

const passes = (r: CaseResult) => expect(r.failure?.message ?? 'passed').toBe('passed');

describe('a case on the queue', () => {
  it('two callers ahead of two agents: it waits (announced third), and rings the first once one is served', () => {
    const r = run(
      scenario(
        [
          `- expect: ${play('Welcome.')}`,
          `- expect: ${play('You are number 3 in line.')}`,
          `  now: ${at(10)}`,
          `- expect: ${play('Please hold.')}`,
          `  now: ${at(20)}`,
          '  queues: { sales: { served: 1 } }',
          `- expect: ${dial(A)}`,
          '  status: HANGUP',
        ],
        [
          'queues: { sales: { ahead: 2 } }',
          'expect: { vars: { outcome: served, place: { result: ring, agent: "+442079460001", position: 2, ' +
            'waited: 20 } } }',
        ],
      ),
    );
    passes(r);
    expect(
      r.trace
        .filter((t) => t.startsWith('queue'))
        .map((t) => t.slice(0, t.indexOf(',')))
        .join('\n'),
    ).toBe(['queue { op: "poll"', 'queue { op: "poll"', 'queue { op: "poll"', 'queue { op: "done"'].join('\n'));
  });

  it('announces every 60 s of waiting (the first at once), the hold chunks in turn between', () => {
    // one ahead and one agent free: the caller waits, second, until the one ahead is served
    const r = run(
      scenario(
        [
          `- expect: ${play('Welcome.')}`,
          `- expect: ${play('You are number 2 in line.')}`,
          `  now: ${at(20)}`,
          `- expect: ${play('Please hold.')}`,
          `  now: ${at(40)}`,
          '- expect: { command: wait, params: { wait: 20 } }',
          `  now: ${at(61)}`,
          `- expect: ${play('You are number 2 in line.')}`,
          `  now: ${at(62)}`,
          '  queues: { sales: { served: 1 } }',
          `- expect: ${dial(A)}`,
        ],
        [`queues: { sales: { ahead: 1, busy: ["${B}"] } }`],
      ),
    );
    passes(r);
  });

  it('an agent busy with another caller is not rung; freed, it is', () => {
    const r = run(
      scenario(
        [
          `- expect: ${play('Welcome.')}`,
          `- expect: ${dial(B)}`,
          '  result: NOANSWER',
          `- expect: ${play('You are number 1 in line.')}`,
          '  queues: { sales: { free: ["+442079460001"] } }',
          `- expect: ${dial(A)}`,
          '  status: HANGUP',
        ],
        [`queues: { sales: { busy: ["${A}"] } }`, 'expect: { vars: { outcome: served } }'],
      ),
    );
    passes(r);
  });

  it('every agent paused: the empty branch; resumed at a step, the caller is rung', () => {
    passes(
      run(
        scenario(
          [`- expect: ${play('Welcome.')}`, `- expect: ${play('We are closed.')}`],
          [`queues: { sales: { paused: ["${A}", "${B}"] } }`],
        ),
      ),
    );
    passes(
      run(
        scenario(
          [
            `- expect: ${play('Welcome.')}`,
            `- expect: ${play('You are number 1 in line.')}`,
            `  queues: { sales: { resumed: ["${A}"] } }`,
            `- expect: ${dial(A)}`,
          ],
          [`queues: { sales: { paused: ["${A}"], busy: ["${B}"] } }`],
        ),
      ),
    );
  });

  it('max_wait gone by: the timeout branch and its say; the caller hanging up while waiting: abandoned', () => {
    passes(
      run(
        scenario(
          [
            `- expect: ${play('Welcome.')}`,
            `- expect: ${play('You are number 2 in line.')}`,
            `  now: ${at(600)}`,
            `- expect: ${play('Nobody could take your call.')}`,
          ],
          ['queues: { sales: { ahead: 1, busy: ["+442079460001", "+442079460002"] } }'],
        ),
      ),
    );
    passes(
      run(
        scenario(
          [`- expect: ${play('Welcome.')}`, `- expect: ${play('You are number 3 in line.')}`, '  status: HANGUP'],
          ['queues: { sales: { ahead: 2 } }', 'expect: { vars: { outcome: left } }'],
        ),
      ),
    );
  });

  it('a queue operation is a step where the case expects one: checked, and answered by its answer:', () => {
    const r = run(
      scenario([
        `- expect: ${play('Welcome.')}`,
        `- expect: { queue: { op: poll, name: sales, agents: ["${A}", "${B}"], max_wait: 600 } }`,
        '  answer: { result: wait, position: 7, waited: 0 }',
        `- expect: ${play('You are number 7 in line.')}`,
        '- expect: queue',
        `  answer: { result: ring, agent: "${B}" }`,
        `- expect: ${dial(B)}`,
        '- expect: { queue: { op: poll } }',
        '  answer: { error: UNAVAILABLE }',
        `- expect: ${play('We are closed.')}`,
      ]),
    );
    passes(r);
  });

  it("a queue step's params that differ, and an answer that cannot answer the op, fail the case where written", () => {
    const differ = run(
      scenario([`- expect: ${play('Welcome.')}`, '- expect: { queue: { op: poll, name: sales, ring_time: 20 } }']),
    );
    expect(differ.failure).toMatchObject({
      step: 1,
      message: 'queue: params differ (from flow step "wait_line")',
      diff: ['- params.ring_time: 20', '+ params.ring_time: 15'],
    });
    const leave = run(
      scenario([
        `- expect: ${play('Welcome.')}`,
        '- expect: queue',
        '  answer: { result: left }',
        `- expect: ${play('You are number 1 in line.')}`,
      ]),
    );
    expect(leave.failure).toMatchObject({
      step: 1,
      pos: { line: 8 },
      message: "answer: left does not answer the flow's poll (a poll answers ring, wait, timeout, empty)",
    });
  });

  it('in a recording every queue operation is a step: one the recording lacks fails the case', () => {
    const r = run(scenario([`- expect: ${play('Welcome.')}`, `- expect: ${play('We are closed.')}`]), LINE, true);
    expect(r.failure?.message).toBe('expected play, got queue (from flow step "wait_line")');
  });

  it('coverage counts the queue step keys like any other', () => {
    const cov = new Coverage();
    const f = compiled(LINE);
    const hooks = cov.hooksFor(f);
    const cases = [
      scenario(
        [
          `- expect: ${play('Welcome.')}`,
          `- expect: ${play('You are number 2 in line.')}`,
          `- expect: ${play('Please hold.')}`,
          '  queues: { sales: { served: 1 } }',
          `- expect: ${dial(A)}`,
          '  result: NOANSWER',
          `  queues: { sales: { free: ["${B}"] } }`,
          `- expect: ${dial(B)}`,
          '  status: HANGUP',
        ],
        [`queues: { sales: { ahead: 1, busy: ["${B}"] } }`],
      ),
      scenario(
        [`- expect: ${play('Welcome.')}`, `- expect: ${play('You are number 1 in line.')}`, '  status: HANGUP'],
        [`queues: { sales: { busy: ["${A}", "${B}"] } }`],
      ),
    ];
    for (const text of cases) {
      const r = runCase(f, parseScenario(text, 's.yaml').cases[0]!, { hooks });
      passes(r);
    }
    const t = cov.data.flows.line!.transitions;
    expect(Object.fromEntries(Object.entries(t).filter(([k]) => k.startsWith('wait_line:')))).toEqual({
      'wait_line:ring': 2,
      'wait_line:wait': 3,
      'wait_line:announce': 1,
      'wait_line:held': 1,
      'wait_line:noanswer': 1,
      'wait_line:bridged': 1,
      'wait_line:timeout': 0,
      'wait_line:empty': 0,
      'wait_line:error': 0,
      'wait_line:abandoned': 1,
    });
  });

  it('hostile: 10,000 callers ahead fill the line: the caller is answered empty', () => {
    passes(
      run(
        scenario(
          [`- expect: ${play('Welcome.')}`, `- expect: ${play('We are closed.')}`],
          ['queues: { sales: { ahead: 10000 } }'],
        ),
      ),
    );
    passes(
      run(
        scenario(
          [
            `- expect: ${play('Welcome.')}`,
            `- expect: ${play('You are number 10000 in line.')}`,
            '  queues: { sales: { served: 9999 } }',
            `- expect: ${dial(A)}`,
          ],
          ['queues: { sales: { ahead: 9999, busy: ["+442079460002"] } }'],
        ),
      ),
    );
  });
});

describe("a scenario's queues: checked as written", () => {
  it('reports each mistake at its place, with the key meant', () => {
    const text = scenario(
      [
        `- expect: ${play('Welcome.')}`,
        '  queues: { sales: { ahead: 1, servd: 1 } }',
        '- expect: queue',
        '  queues: { sales: { served: 1 } }',
        '  now: "2027-01-15T09:00:10Z"',
        '  result: wait',
        '- expect: { queue: { queue: sales, op: pol } }',
        '  answer: { result: ring, positon: 2 }',
        '- expect: sms',
        '  answer: { result: wait }',
      ],
      [
        'queues: { sales: { waiting: 2, served: 1, busy: "+442079460001", paused: ["+4420", "+442079460001", ' +
          '"+442079460001"] }, "sa les": {} }',
      ],
    );
    expect(problems(text)).toEqual([
      '5:24: unknown key "waiting" in queues.sales: did you mean "ahead"? (allowed in a case\'s queues: ahead, ' +
        'busy, paused)',
      "5:36: queues.sales.served: served: serves callers ahead during the call: write it in a step's queues: (or " +
        'give fewer callers ahead)',
      '5:53: queues.sales.busy is a list of agents\' numbers (busy: ["+442079460001"]), not a string ("+442079460001")',
      '5:79: queues.sales.paused: "+4420": not a possible phone number for its country code',
      '5:105: queues.sales.paused: "+442079460001" is listed twice',
      '5:125: queues: "sa les" is not a queue name (1 to 64 letters, digits, - and _)',
      '8:28: queues.sales.ahead: callers join the line ahead of this caller before the call starts: write ahead: ' +
        "in the case's queues: (a step serves them: served:)",
      '8:38: unknown key "servd" in queues.sales: did you mean "served"? (allowed in a step\'s queues: served, ' +
        'busy, free, paused, resumed)',
      "11:14: `now:` moves the clock on from the request that reports a command's outcome; a queue step has none " +
        '(it runs inside a request): write it on the step of the command whose outcome comes at that time',
      "12:17: a queue step takes its outcome from the case's queues or its answer:, not `result:`",
      "10:17: `queues:` changes the case's queues before the request that reports a command's outcome; a queue " +
        'step has none (it runs inside a request): write it on the step of the command during which they change',
      '13:28: unknown key "queue" in expect.queue: did you mean "name"? (a queue operation\'s params: op, name, ' +
        'agents, strategy, ring_time, wrap_up, max_wait, handle_time, max_talk, waited)',
      '13:46: expect.queue.op: "pol" is not an op of a queue step (did you mean "poll"?): poll, leave, done',
      '14:33: unknown key "positon" in a queue step\'s answer: did you mean "position"? (allowed: result, error, ' +
        'agent, position, waited, expected_wait, agents, free)',
      '14:17: answer: a ring names the agent claimed (agent: "+442079460001"): the dialout rings it',
      '16:17: `answer:` answers the lookup of an http step (expect: http) or a queue operation (expect: queue); ' +
        'other steps take result:, error: or status:',
    ]);
  });

  it('follows the case: no more served than ahead, no agent freed that is not busy, none paused twice', () => {
    const text = scenario(
      [
        `- expect: ${play('Welcome.')}`,
        '  queues: { sales: { served: 2, free: ["+442079460002"], busy: ["+442079460001"], resumed: ' +
          '["+442079460001"] } }',
        `- expect: ${play('Please hold.')}`,
        '  queues: { sales: { served: 1, paused: ["+442079460002"] } }',
      ],
      ['queues: { sales: { ahead: 2, busy: ["+442079460001"], paused: ["+442079460002"] } }'],
    );
    expect(problems(text)).toEqual([
      '8:46: queues.sales.free: "+442079460002" is not busy (free: frees an agent a busy: made busy) (did you ' +
        'mean "+442079460001"?)',
      '8:71: queues.sales.busy: "+442079460001" is busy already (line 5)',
      '8:99: queues.sales.resumed: "+442079460001" is not paused in sales (resumed: undoes a paused:)',
      '10:36: queues.sales.served: 1 serves more callers than are ahead: 0 left (ahead: at line 5)',
      '10:48: queues.sales.paused: "+442079460002" is paused already (line 5)',
    ]);
    expect(problems(scenario([`- expect: ${play('Welcome.')}`, '  queues: { sales: { served: 1 } }']))).toEqual([
      "7:36: queues.sales.served: 1 serves more callers than are ahead: none (give the case's queues: { sales: { " +
        'ahead: n } })',
    ]);
  });

  it('hostile: more callers ahead than a line holds, more agents than a list holds', () => {
    const many = JSON.stringify(Array.from({ length: 1001 }, (_, i) => `+4420794${String(i).padStart(5, '0')}`));
    expect(
      problems(scenario([`- expect: ${play('Welcome.')}`], [`queues: { sales: { ahead: 10001, busy: ${many} } }`])),
    ).toEqual([
      '5:31: queues.sales.ahead is a number of callers, 0 to 10,000 (a line holds 10,000 callers), not an ' +
        'integer (10001)',
      '5:44: queues.sales.busy lists 1,001 numbers; at most 1000',
    ]);
  });

  it("names a queue the flow does not have, and an agent not of the queue's list, with the one meant", () => {
    const s = parseScenario(
      scenario(
        [`- expect: ${play('Welcome.')}`, '  queues: { sale: { busy: ["+442079460002"] } }'],
        ['queues: { sales: { ahead: 1, busy: ["+442079460011"] } }'],
      ),
      's.test.yaml',
    );
    expect(checkQueueNames(s, compiled(LINE)).map((e) => `${e.line}:${e.column}: ${e.message}`)).toEqual([
      '5:41: queues.sales.busy: "+442079460011" is not an agent of queue sales in flow line (did you mean ' +
        '"+442079460001"?)',
      '8:19: queues: "sale" is not a queue of flow line (did you mean "sales"?)',
    ]);
    const bare = parseScenario(
      scenario(['- expect: play'], ['queues: { sales: { ahead: 1 } }'], 'bare'),
      's.test.yaml',
    );
    expect(checkQueueNames(bare, compiled(BARE)).map((e) => e.message)).toEqual([
      'queues: "sales" is not a queue of flow bare (its queues: help)',
    ]);
  });
});

describe('schemas/scenario.schema.json and the queue forms', () => {
  const schema = JSON.parse(readFileSync('schemas/scenario.schema.json', 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(
    schema,
  );
  const errorsOf = (text: string) =>
    validate(parse(text)) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);

  it('accepts what the checker accepts: queues on a case and a step, queue steps and their answers', () => {
    const ok = scenario(
      [
        `- expect: ${play('Welcome.')}`,
        '  queues: { sales: { served: 1, busy: ["+442079460002"], free: ["+442079460001"], resumed: ' +
          '["+442079460001"] } }',
        '- expect: { queue: { op: poll, name: sales, agents: ["+442079460001"], strategy: in_order, max_wait: 600 } }',
        '  answer: { result: ring, agent: "+442079460001", position: 1, waited: 0, expected_wait: 0, agents: 2, ' +
          'free: 1 }',
        '- expect: queue',
        '  answer: { error: UNAVAILABLE }',
        '- expect: { command: queue, params: { op: leave } }',
        '  answer: { result: left }',
      ],
      ['queues: { sales: { ahead: 1, busy: ["+442079460001"], paused: ["+442079460001"] } }'],
    );
    expect(problems(ok)).toEqual([]);
    expect(errorsOf(ok)).toEqual([]);
  });

  it('refuses what the checker refuses: a key of the other place, queues: or now: on a queue step', () => {
    const bad = scenario(
      ['- expect: queue', '  queues: { sales: { ahead: 1 } }', '  now: 5'],
      ['queues: { sales: { served: 1 } }'],
    );
    expect(errorsOf(bad)).toEqual([
      '/cases/0/queues/sales must NOT have additional properties',
      '/cases/0/steps/0 must NOT be valid',
      '/cases/0/steps/0 must match "then" schema',
      '/cases/0/steps/0/queues/sales must NOT have additional properties',
    ]);
  });
});

describe('docs/testing.md "Queues"', () => {
  it('its example passes against flows/call-centre.yaml', () => {
    const md = readFileSync('docs/testing.md', 'utf8');
    const section = md.slice(md.indexOf('### Queues'));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const s = parseScenario(yaml, 'docs.test.yaml');
    const f = compiled(readFileSync('flows/call-centre.yaml', 'utf8'), 'flows/call-centre.yaml');
    expect(checkQueueNames(s, f)).toEqual([]);
    passes(runCase(f, s.cases[0]!));
  });
});

describe('hostile: forged queue answers in a scenario or a recording', () => {
  it('an answer out of bounds, of another op, or naming no agent is refused where written', () => {
    const text = scenario([
      `- expect: ${play('Welcome.')}`,
      '- expect: { queue: { op: leave } }',
      '  answer: { result: wait, position: 99999999, waited: -1, agents: 2, free: 3 }',
      '- expect: queue',
      '  answer: { result: ring, agent: "<script>" }',
      '- expect: queue',
      '  answer: { result: left, position: 1 }',
      '- expect: queue',
      '  answer: { error: "lower case" }',
      '- expect: queue',
      '  answer: { error: UNAVAILABLE, agent: "+442079460001" }',
    ]);
    expect(problems(text)).toEqual([
      '8:27: answer.result: wait does not answer a leave (a leave answers left)',
      '8:43: answer.position is a whole number, 0 to 10,000, not an integer (99999999)',
      '8:61: answer.waited is a whole number, 0 to 86,400, not an integer (-1)',
      '8:82: answer.free (3) is more than answer.agents (2)',
      '10:40: answer.agent: an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. +33123456789)',
      "12:43: answer.position goes with a poll's answer (ring, wait, timeout, empty), not left",
      '14:26: answer.error is an error kind in capitals (UNAVAILABLE), not a string ("lower case")',
      '16:46: answer.agent goes with a result, not with an error',
    ]);
  });
});
