/**
 * The checker on queue steps (version 2, src/flow/check-queue.ts): every diagnostic at its exact code, line, column
 * and message, one mistake giving one diagnostic; the graph checks over the queue's branches (unreachable steps,
 * unknown targets, the hangup handler, bridged, loops without a command); the announcement's template and the
 * `{ expr }` agents checked as everywhere else; the model of a clean step and its coverage keys.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { flowTransitions } from '../../src/testing/transitions.js';
import { AGENTS, BRANCHES, NAME, qflow, type QueueFlow } from './queue-fixture.js';

const check = (text: string) => checkFlow(text, 'flows/t.yaml');
const diags = (text: string) =>
  check(text).diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`);
const WHO = "step 'a': queue";

interface Case {
  name: string;
  flow: QueueFlow | string;
  want: string;
  hint?: string;
}

const c = (name: string, flow: QueueFlow | string, want: string, hint?: string): Case =>
  hint === undefined ? { name, flow, want } : { name, flow, want, hint };
const extra = (...lines: string[]): QueueFlow => ({ extra: lines });
const agents = (line: string): QueueFlow => ({ queue: [NAME, `      agents: ${line}`] });
const on = (...lines: string[]): QueueFlow => ({ on: lines });

const NAME_HINT =
  'A queue is shared by every flow and instance that names it: write a fixed name, e.g. sales or support-fr (a ' +
  'name cannot be a template: one step, one line).';
const EXAMPLE = 'Write e.g. queue: { name: sales, agents: ["+442079460001", "+442079460002"] }.';

const CASES: Case[] = [
  // the line's name
  c(
    'a name with a space',
    { queue: ['      name: "sales line"', AGENTS] },
    `9:13 error BAD_NAME ${WHO} name 'sales line' may use only letters, digits, - and _ (64 at most)`,
    NAME_HINT,
  ),
  c(
    'a name as a template',
    { queue: ['      name: "sales-{{ vars.lang }}"', AGENTS] },
    `9:13 error BAD_NAME ${WHO} name 'sales-{{ vars.lang }}' may use only letters, digits, - and _ (64 at most)`,
  ),
  c(
    'a name of 65 characters',
    { queue: ['      name: ' + 'q'.repeat(65), AGENTS] },
    `9:13 error BAD_NAME ${WHO} name '${'q'.repeat(39)}…' may use only letters, digits, - and _ (64 at most)`,
  ),
  c(
    'a name that is a number',
    { queue: ['      name: 12', AGENTS] },
    `9:13 error TYPE_MISMATCH ${WHO} name must be a string, not an integer (12)`,
  ),
  // required keys: one diagnostic, also for both, none beside a misspelt one
  c('no name', { queue: [AGENTS] }, `8:5 error MISSING_KEY ${WHO} needs 'name'`, EXAMPLE),
  c('no agents', { queue: [NAME] }, `8:5 error MISSING_KEY ${WHO} needs 'agents'`, EXAMPLE),
  c(
    'neither name nor agents',
    { queue: ['      strategy: in_order'] },
    `8:5 error MISSING_KEY ${WHO} needs 'name' and 'agents'`,
  ),
  c(
    'a misspelt name key',
    { queue: ['      nmae: sales', AGENTS] },
    "9:7 error UNKNOWN_KEY step 'a': unknown key 'nmae' in queue",
    "did you mean 'name'?",
  ),
  c(
    'a misspelt agents key',
    { queue: [NAME, '      agnets: ["+442079460001"]'] },
    "10:7 error UNKNOWN_KEY step 'a': unknown key 'agnets' in queue",
    "did you mean 'agents'?",
  ),
  // unknown keys
  c(
    'a misspelt key',
    extra('      ring_tme: 10'),
    "11:7 error UNKNOWN_KEY step 'a': unknown key 'ring_tme' in queue",
    "did you mean 'ring_time'?",
  ),
  c(
    'an unknown key',
    extra('      colour: red'),
    "11:7 error UNKNOWN_KEY step 'a': unknown key 'colour' in queue",
    'Remove it (known: name, agents, strategy, ring_time, wrap_up, max_wait, handle_time, max_talk, hold, ' +
      'announce, whisper, cli).',
  ),
  c(
    'queue: not a map',
    qflow({ queue: [] }).replace('    queue:\n', '    queue: sales\n'),
    `8:12 error TYPE_MISMATCH ${WHO} takes a map { name, agents, ... }, not a string ("sales")`,
    'Write e.g. queue: { name: sales, agents: ["+442079460001"] }.',
  ),
  // strategy
  c(
    'a misspelt strategy',
    extra('      strategy: roundrobin'),
    `11:17 error BAD_ENUM ${WHO} strategy 'roundrobin' is not one of in_order, round_robin, longest_idle`,
    "did you mean 'round_robin'?",
  ),
  c(
    'an unknown strategy',
    extra('      strategy: random'),
    `11:17 error BAD_ENUM ${WHO} strategy 'random' is not one of in_order, round_robin, longest_idle`,
    'in_order rings the first free agent as listed, round_robin the next one after the last rung, longest_idle ' +
      'the one free for the longest.',
  ),
  // the int bounds, each way
  c(
    'ring_time 4',
    extra('      ring_time: 4'),
    `11:18 error OUT_OF_BOUNDS ${WHO} ring_time must be between 5 and 300, got 4`,
    'Seconds an agent rings before NOANSWER. 5 to 300; 20 when not given.',
  ),
  c(
    'ring_time 301',
    extra('      ring_time: 301'),
    `11:18 error OUT_OF_BOUNDS ${WHO} ring_time must be between 5 and 300, got 301`,
  ),
  c(
    'ring_time quoted',
    extra('      ring_time: "20"'),
    `11:18 error TYPE_MISMATCH ${WHO} ring_time must be an integer (5..300), not a string ("20")`,
    'Write it without quotes: ring_time: 20.',
  ),
  c(
    'wrap_up -1',
    extra('      wrap_up: -1'),
    `11:16 error OUT_OF_BOUNDS ${WHO} wrap_up must be between 0 and 3600, got -1`,
    'Seconds an agent stays busy after a call. 0 to 3600; 0 when not given.',
  ),
  c(
    'wrap_up 3601',
    extra('      wrap_up: 3601'),
    `11:16 error OUT_OF_BOUNDS ${WHO} wrap_up must be between 0 and 3600, got 3601`,
  ),
  c(
    'max_wait 9',
    extra('      max_wait: 9'),
    `11:17 error OUT_OF_BOUNDS ${WHO} max_wait must be between 10 and 86400, got 9`,
    'Seconds in the line before the timeout branch. 10 to 86400; 900 when not given.',
  ),
  c(
    'max_wait 86401',
    extra('      max_wait: 86401'),
    `11:17 error OUT_OF_BOUNDS ${WHO} max_wait must be between 10 and 86400, got 86401`,
  ),
  c(
    'handle_time 9',
    extra('      handle_time: 9'),
    `11:20 error OUT_OF_BOUNDS ${WHO} handle_time must be between 10 and 7200, got 9`,
    'Seconds a call takes, for the expected wait until the queue has served calls of its own. 10 to 7200; 180 ' +
      'when not given.',
  ),
  c(
    'handle_time 7201',
    extra('      handle_time: 7201'),
    `11:20 error OUT_OF_BOUNDS ${WHO} handle_time must be between 10 and 7200, got 7201`,
  ),
  c(
    'max_talk 59',
    extra('      max_talk: 59'),
    `11:17 error OUT_OF_BOUNDS ${WHO} max_talk must be between 60 and 86400, got 59`,
    'Seconds after which an agent whose call was never seen to end (an instance lost) is free again. 60 to ' +
      '86400; 7200 when not given.',
  ),
  c(
    'max_talk 86401',
    extra('      max_talk: 86401'),
    `11:17 error OUT_OF_BOUNDS ${WHO} max_talk must be between 60 and 86400, got 86401`,
  ),
  c(
    'max_talk a decimal',
    extra('      max_talk: 90.5'),
    `11:17 error TYPE_MISMATCH ${WHO} max_talk must be an integer (60..86400), not a number (90.5)`,
  ),
  // hold
  c(
    'hold of 33 entries',
    extra('      hold: [' + Array(33).fill('"Please hold."').join(', ') + ']'),
    `11:13 error OUT_OF_BOUNDS ${WHO} hold has 33 entries; at most 32`,
    'Hold media loop: a few chunks (music, a message) are enough.',
  ),
  c(
    'hold: an empty list',
    extra('      hold: []'),
    `11:13 error BAD_MEDIA ${WHO} hold is an empty list; give at least one media or { wait: n }`,
  ),
  c(
    'hold: a wait of 31 s',
    extra('      hold: ["Please hold.", { wait: 31 }]'),
    `11:38 error OUT_OF_BOUNDS ${WHO} hold wait must be between 1 and 30, got 31`,
    'A hold wait lasts 1 to 30 seconds (the wait command).',
  ),
  c(
    'hold: a misspelt wait',
    extra('      hold: ["Please hold.", { wiat: 5 }]'),
    `11:32 error UNKNOWN_KEY ${WHO} hold: unknown key 'wiat'`,
    "did you mean 'wait'? ({ wait: 5 })",
  ),
  c(
    'hold: a list in the list',
    extra('      hold: ["Please hold.", ["a", "b"]]'),
    `11:30 error BAD_MEDIA ${WHO} hold: a list of media and waits cannot hold another list`,
  ),
  c(
    'hold: a negative media id',
    extra('      hold: [-3]'),
    `11:14 error BAD_MEDIA ${WHO} hold: -3 is not a media id (a media id is a positive integer; 0 means no media)`,
  ),
  // announce
  c(
    'announce without say',
    extra('      announce: { every: 60 }'),
    `11:17 error MISSING_KEY ${WHO} announce needs 'say' (what to announce)`,
    'Write e.g. announce: { every: 60, say: "You are number {{ vars.place.position }} in line." }, with save: ' +
      'place on the step.',
  ),
  c(
    'announce every 9',
    extra('      announce: { every: 9, say: "Please hold." }'),
    `11:26 error OUT_OF_BOUNDS ${WHO} announce every must be between 10 and 3600, got 9`,
    'Announcements come every 10 to 3600 seconds of waiting (60 when not given).',
  ),
  c(
    'announce every 3601',
    extra('      announce: { every: 3601, say: "Please hold." }'),
    `11:26 error OUT_OF_BOUNDS ${WHO} announce every must be between 10 and 3600, got 3601`,
  ),
  c(
    'announce every quoted',
    extra('      announce: { every: "60", say: "Please hold." }'),
    `11:26 error TYPE_MISMATCH ${WHO} announce every must be an integer (10..3600), not a string ("60")`,
  ),
  c(
    'announce: a misspelt every',
    extra('      announce: { evrey: 60, say: "Please hold." }'),
    "11:19 error UNKNOWN_KEY step 'a': unknown key 'evrey' in queue announce",
    "did you mean 'every'?",
  ),
  c(
    'announce: a misspelt say (no MISSING_KEY beside it)',
    extra('      announce: { every: 60, sya: "Please hold." }'),
    "11:30 error UNKNOWN_KEY step 'a': unknown key 'sya' in queue announce",
    "did you mean 'say'?",
  ),
  c(
    'announce: an unknown key',
    extra('      announce: { say: "Please hold.", colour: red }'),
    "11:40 error UNKNOWN_KEY step 'a': unknown key 'colour' in queue announce",
    'announce takes every (seconds) and say (a media).',
  ),
  c(
    'announce: not a map',
    extra('      announce: "Please hold."'),
    `11:17 error TYPE_MISMATCH ${WHO} announce must be a map, not a string ("Please hold.")`,
  ),
  c(
    'announce: an empty say',
    extra('      announce: { say: "" }'),
    `11:24 error BAD_MEDIA ${WHO} announce say is an empty text`,
  ),
  // agents
  c(
    'an agent that is no number',
    agents('["+44207", "+442079460002"]'),
    `10:16 error BAD_FORMAT ${WHO} agents: '+44207': not a possible phone number for its country code`,
  ),
  c(
    'an agent written as an integer',
    agents('[442079460001]'),
    `10:16 error TYPE_MISMATCH ${WHO} agents: an agent is a number in a string ("+44..."), not an integer ` +
      '(442079460001)',
  ),
  c(
    'an agent listed twice',
    agents('["+442079460001", "+442079460001"]'),
    `10:33 error DUPLICATE_KEY ${WHO} agents: '+442079460001' is listed twice`,
  ),
  c(
    'agents: an empty list',
    agents('[]'),
    `10:15 error OUT_OF_BOUNDS ${WHO} agents is an empty list: no caller could ever be served`,
    'List at least one number, or give { expr: ... } for a list known when the call runs (an empty one then ' +
      'takes empty).',
  ),
  c(
    'agents: a string',
    agents('"+442079460001"'),
    `10:15 error TYPE_MISMATCH ${WHO} agents must be a list of numbers or { expr: ... }, not a string ` +
      '("+442079460001")',
    'Write e.g. agents: ["+442079460001", "+442079460002"], or agents: { expr: "vars.team" }.',
  ),
  c(
    'agents: a misspelt expr',
    agents('{ exp: vars.team }'),
    `10:15 error TYPE_MISMATCH ${WHO} agents must be a list of numbers or { expr: ... }, not a map`,
    `did you mean 'expr'? (agents: { expr: "vars.team" })`,
  ),
  c(
    'agents: a template that does not parse',
    agents('["{{ vars.team "]'),
    `10:16 error BAD_TEMPLATE ${WHO} agents: template does not parse: output "{{ vars.team " not closed, ` +
      'line:1, col:1',
  ),
  // whisper, cli
  c(
    'a bad cli',
    extra('      cli: "12345"'),
    `11:12 error BAD_FORMAT ${WHO} cli '12345' is not an E.164 number or BLOCKED`,
  ),
  c(
    'a cli as an integer',
    extra('      cli: 442079460001'),
    `11:12 error TYPE_MISMATCH ${WHO} cli must be a string, not an integer (442079460001)`,
  ),
  c('an empty whisper', extra('      whisper: ""'), `11:16 error BAD_MEDIA ${WHO} whisper is an empty text`),
  // the branches
  c(
    'retry in a queue branch',
    on('      bridged: noted', '      timeout: { retry: 2, then: bye }', '      empty: bye'),
    `14:16 error MISPLACED_KEY ${WHO} timeout: retry does not go with a queue result`,
    'Go to the queue step again (goto) to wait again: the caller keeps no place once out of the line.',
  ),
  c(
    'retry in next',
    { on: ['      bridged: noted'], step: ['    next: { retry: 1, then: bye }'] },
    `14:11 error MISPLACED_KEY ${WHO} next: retry does not go with a queue result`,
  ),
  c(
    'say on bridged',
    on('      bridged: { goto: noted, say: "Goodbye." }', '      timeout: bye', '      empty: bye'),
    `13:16 error MISPLACED_KEY ${WHO} bridged: say does not go with bridged`,
    'The call has ended when bridged is taken (the agent or the caller hung up): only logic steps run there.',
  ),
  c(
    'abandoned under on:',
    on(...BRANCHES, '      abandoned: noted'),
    `16:7 error IMPOSSIBLE_RESULT ${WHO} has no result 'abandoned'`,
    'A caller who hangs up while waiting ends the call: handlers.hangup runs (call.status says why).',
  ),
  c(
    'a misspelt result (no UNHANDLED_RESULT beside it)',
    on('      bridged: noted', '      timout: bye', '      empty: bye'),
    `14:7 error IMPOSSIBLE_RESULT ${WHO} has no result 'timout'`,
    "did you mean 'timeout'?",
  ),
  c(
    'NOANSWER under on:',
    on(...BRANCHES, '      NOANSWER: bye'),
    `16:7 error IMPOSSIBLE_RESULT ${WHO} has no result 'NOANSWER'`,
    "An agent who does not answer is the queue's affair: the caller goes on waiting for the next free agent " +
      '(ring_time says how long one rings).',
  ),
  c(
    'default under on: (no UNHANDLED_RESULT beside it)',
    on('      bridged: noted', '      default: bye'),
    `14:7 error IMPOSSIBLE_RESULT ${WHO} has no result 'default'`,
    'A queue step has no default: write next: for timeout and empty (bridged and error have their own keys).',
  ),
  c(
    'an unknown result',
    on(...BRANCHES, '      busy: bye'),
    `16:7 error IMPOSSIBLE_RESULT ${WHO} has no result 'busy'`,
    'A queue step branches on bridged, timeout, empty and error (next: for timeout and empty).',
  ),
  c(
    'no timeout branch',
    on('      bridged: noted', '      empty: bye'),
    `8:5 warning UNHANDLED_RESULT ${WHO} result timeout leads nowhere: with no next, the call would be hung up`,
    'Branch on timeout (max_wait went by) and empty (no agent can take the call) under on:, or give next: for ' +
      'both (e.g. a message, then voicemail).',
  ),
  c(
    'neither timeout nor empty',
    { on: ['      bridged: noted'], more: ['  c: { say: "Goodbye.", next: bye }'] }, // bye, c: reached by nothing
    `8:5 warning UNHANDLED_RESULT ${WHO} results timeout, empty lead nowhere: with no next, the call would be ` +
      'hung up',
  ),
  c(
    'handlers on the step',
    { step: ['    handlers: false'] },
    "16:5 error MISPLACED_KEY step 'a': 'handlers' does not go with queue",
    'handlers.on does not apply to a queue step (its results are its own); a failure takes on: { error } or ' +
      'handlers.error.',
  ),
  c(
    'valid on the step',
    { step: ['    valid: "true"'] },
    "16:5 error MISPLACED_KEY step 'a': 'valid' does not go with queue",
    'A queue step takes no input.',
  ),
  c(
    'a version 1 file',
    { version: 1 },
    '8:5 error NEEDS_VERSION_2 queue is part of version 2 of the language; this file declares version: 1',
  ),
  c(
    'save: a bad name',
    qflow().replace('save: place', 'save: 1place'),
    "11:11 error BAD_NAME save: '1place' is not a valid variable name: start with a letter or _, then letters, " +
      'digits and _ (64 at most)',
  ),
];

describe('queue: each mistake is one diagnostic, at its place', () => {
  it.each(CASES.map((x) => [x.name, x] as const))('%s', (_name, x) => {
    const text = typeof x.flow === 'string' ? x.flow : qflow(x.flow);
    const got = check(text).diagnostics.filter((d) => d.code !== 'UNREACHABLE_STEP');
    expect(got.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`)).toEqual([x.want]);
    if (x.hint !== undefined) expect(got[0]!.hint).toBe(x.hint);
    // a model only without errors (the unreached steps of some cases are errors)
    expect(check(text).model === undefined).toBe(check(text).diagnostics.some((d) => d.severity === 'error'));
  });

  it('the cases that leave steps unreached say so, and nothing else', () => {
    // on: { bridged } alone: bye and c are named by nothing
    expect(
      diags(qflow({ on: ['      bridged: noted'], more: ['  c: { say: "Goodbye.", next: bye }'] })).slice(1),
    ).toEqual([
      "14:3 error UNREACHABLE_STEP step 'bye' is never reached from start 'a' or the hangup handler",
      "16:3 error UNREACHABLE_STEP step 'c' is never reached from start 'a' or the hangup handler",
    ]);
  });
});

describe('queue: a clean step', () => {
  it('checks clean with every key, and its model holds them (defaults for the rest)', () => {
    const text = qflow({
      extra: [
        '      strategy: longest_idle',
        '      ring_time: 15',
        '      wrap_up: 30',
        '      max_wait: 600',
        '      hold: [1234, "Please hold.", { wait: 20 }]',
        '      announce: { every: 45, say: "You are number {{ vars.place.position }} in line." }',
        '      whisper: "A caller from sales."',
        '      cli: BLOCKED',
      ],
      on: [...BRANCHES, '      error: bye'],
    });
    const { diagnostics, model } = check(text);
    expect(diagnostics).toEqual([]);
    const a = model!.steps.a!;
    expect(a.kind === 'command' && a.save).toBe('place');
    expect(a.kind === 'command' && a.queue).toEqual({
      name: 'sales',
      agents: { kind: 'list', items: ['+442079460001', '+442079460002'] },
      strategy: 'longest_idle',
      ring_time: 15,
      wrap_up: 30,
      max_wait: 600,
      handle_time: 180,
      max_talk: 7200,
      hold: [
        { kind: 'media', media: { kind: 'id', id: 1234 } },
        { kind: 'media', media: { kind: 'tts', voice: 'TTS_EN-GB_SERENA', text: 'Please hold.' } },
        { kind: 'wait', wait: 20 },
      ],
      announce: {
        every: 45,
        media: [{ kind: 'tts', voice: 'TTS_EN-GB_SERENA', text: 'You are number {{ vars.place.position }} in line.' }],
      },
      whisper: [{ kind: 'tts', voice: 'TTS_EN-GB_SERENA', text: 'A caller from sales.' }],
      cli: 'BLOCKED',
    });
  });

  it('takes the defaults: in_order, 20 s rings, no wrap-up, 900 s in line, a 10 s wait as hold', () => {
    const a = check(qflow()).model!.steps.a!;
    expect(a.kind === 'command' && a.queue).toEqual({
      name: 'sales',
      agents: { kind: 'list', items: ['+442079460001', '+442079460002'] },
      strategy: 'in_order',
      ring_time: 20,
      wrap_up: 0,
      max_wait: 900,
      handle_time: 180,
      max_talk: 7200,
      hold: [{ kind: 'wait', wait: 10 }],
    });
  });

  it('takes the bounds themselves, 1,000 agents and 32 hold chunks', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `"+4420794${String(i).padStart(5, '0')}"`);
    const text = qflow({
      queue: [NAME, `      agents: [${many.join(', ')}]`],
      extra: [
        '      ring_time: 300',
        '      wrap_up: 3600',
        '      max_wait: 86400',
        '      handle_time: 10',
        '      max_talk: 60',
        '      hold: [' + Array(32).fill('{ wait: 30 }').join(', ') + ']',
        '      announce: { every: 10, say: "Still there." }',
      ],
    });
    expect(diags(text)).toEqual([]);
    const over = qflow({ queue: [NAME, `      agents: [${[...many, '"+442079499999"'].join(', ')}]`] });
    expect(diags(over)).toEqual([`10:15 error OUT_OF_BOUNDS ${WHO} agents lists 1,001 numbers; at most 1,000`]);
  });

  it('next: stands for timeout and empty; on: keys win over it', () => {
    const text = qflow({
      on: ['      bridged: noted', '      timeout: sorry'],
      step: ['    next: bye'],
      more: ['  sorry: { say: "Nobody is free.", next: bye }'],
    });
    const { diagnostics, model } = check(text);
    expect(diagnostics).toEqual([]);
    const a = model!.steps.a!;
    if (a.kind !== 'command') throw new Error('not a command step');
    expect([a.on.exact.timeout?.goto, a.on.exact.empty?.goto, a.on.exact.bridged?.goto]).toEqual([
      'sorry',
      'bye',
      'noted',
    ]);
  });
});

describe('queue: the graph sees its branches', () => {
  it('a step reached only through bridged, timeout, empty, error or next is reached', () => {
    const text = qflow({
      on: ['      bridged: b1', '      timeout: t1', '      error: e1'],
      step: ['    next: n1'],
      more: [
        '  b1: { set: { outcome: bridged } }',
        '  t1: { say: "Nobody could take your call.", next: bye }',
        '  e1: { say: "Sorry.", next: bye }',
        '  n1: { say: "We are closed.", next: bye }',
      ],
    });
    // noted is the hangup handler: reached too
    expect(diags(text)).toEqual([]);
  });

  it('a step none of them names is unreachable', () => {
    const text = qflow({ more: ['  lost: { say: "Never played.", next: bye }'] });
    expect(diags(text)).toEqual([
      "18:3 error UNREACHABLE_STEP step 'lost' is never reached from start 'a' or the hangup handler",
    ]);
  });

  it.each([
    [
      'on: bridged',
      { on: ['      bridged: notd', '      timeout: bye', '      empty: bye'] },
      '13:16',
      'notd',
      'noted',
    ],
    ['on: timeout', { on: ['      bridged: noted', '      timeout: by', '      empty: bye'] }, '14:16', 'by', 'bye'],
    ['on: error', { on: [...BRANCHES, '      error: { goto: byee }'] }, '16:22', 'byee', 'bye'],
    ['next:', { on: ['      bridged: noted'], step: ['    next: bey'] }, '14:11', 'bey', 'bye'],
  ] as const)('an unknown target in %s is UNKNOWN_STEP with the nearest step', (_n, f, at, id, near) => {
    const d = check(qflow(f)).diagnostics;
    expect(d.map((x) => [`${x.line}:${x.column} ${x.code} ${x.message}`, x.hint])).toEqual([
      [`${at} UNKNOWN_STEP no step '${id}' in this flow`, `did you mean '${near}'?`],
    ]);
  });

  it('the hangup handler may not be, or lead to, a queue step', () => {
    const text = qflow({ more: ['  m: { say: "Hello.", next: a }'] })
      .replace('start: a', 'start: m')
      .replace('  hangup: noted', '  hangup: a');
    expect(diags(text)).toEqual([
      "4:11 error HANDLER_COMMAND the hangup handler 'a' is a queue step; it must be a logic step (set, switch, when)",
    ]);
    const via = qflow({ more: ['  h: { set: { outcome: left }, next: a }'] }).replace('  hangup: noted', '  hangup: h');
    // noted, no longer the handler, is still reached through bridged
    expect(diags(via)).toEqual([
      "4:11 error HANDLER_COMMAND the hangup handler leads to command step 'a' (h -> a); the call is over when it runs",
    ]);
  });

  it('bridged may not be, or lead to, a command step: the call is over when it is taken', () => {
    const HINT =
      'bridged is taken once the call has ended (the caller or the agent hung up), instead of handlers.hangup: ' +
      'lead it to logic steps only (set, switch, when, sms, http).';
    const to = (target: string, more: string[]) =>
      check(
        qflow({ on: [`      bridged: ${target}`, '      timeout: bye', '      empty: bye'], more }),
      ).diagnostics.map((d) => [`${d.line}:${d.column} ${d.code} ${d.message}`, d.hint]);
    expect(to('thanks', ['  thanks: { say: "Thank you.", next: bye }'])).toEqual([
      ["13:16 HANDLER_COMMAND queue 'a': bridged goes to command step 'thanks'; the call is over when it runs", HINT],
    ]);
    expect(to('log', ['  log: { set: { outcome: served }, next: bye }'])).toEqual([
      [
        "13:16 HANDLER_COMMAND queue 'a': bridged leads to command step 'bye' (log -> bye); the call is over when " +
          'it runs',
        HINT,
      ],
    ]);
    expect(to('a', [])).toEqual([
      ["13:16 HANDLER_COMMAND queue 'a': bridged goes to command step 'a'; the call is over when it runs", HINT],
    ]);
    // logic steps and effects are fine: a set, a switch, an sms
    const fine = [
      '  log: { set: { outcome: served }, next: pick }',
      '  pick:',
      '    switch:',
      '      - { when: "vars.outcome == \'served\'", goto: text }',
      '    default: noted',
      '  text: { sms: { to: "{{ call.caller }}", body: "Thank you for calling." } }',
    ];
    expect(to('log', fine)).toEqual([]);
  });

  it('empty (or error) back to the queue with no command on the way is EVENTLESS_LOOP; timeout is not', () => {
    const loop = (branches: string[], more: string[] = []) =>
      check(qflow({ on: branches, more })).diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`);
    const MSG =
      "can loop without issuing a command: queue 'a' answers empty (or error) at once when no agent can take the " +
      'call (or the store fails)';
    expect(loop(['      bridged: noted', '      timeout: bye', '      empty: a'])).toEqual([
      `7:3 EVENTLESS_LOOP steps 'a' -> 'a' ${MSG}`,
    ]);
    expect(
      loop(
        ['      bridged: noted', '      timeout: bye', '      empty: bye', '      error: again'],
        ['  again: { set: { outcome: retried }, next: a }'],
      ),
    ).toEqual([`7:3 EVENTLESS_LOOP steps 'a' -> 'again' -> 'a' ${MSG}`]);
    // a say on the way back is a command; a new wait after timeout always holds first (the caller joins again)
    expect(
      loop(['      bridged: noted', '      timeout: bye', '      empty: { goto: a, say: "Please hold." }']),
    ).toEqual([]);
    expect(
      loop(['      bridged: noted', '      timeout: { goto: a, say: "Still busy." }', '      empty: bye']),
    ).toEqual([]);
    expect(loop(['      bridged: noted', '      timeout: a', '      empty: bye'])).toEqual([]);
  });
});

describe('queue: templates and expressions are checked as everywhere', () => {
  it('UNKNOWN_VARIABLE in the announcement, with the nearest; the save: variable counts as set', () => {
    const text = qflow({ extra: ['      announce: { say: "You are number {{ vars.plac.position }}." }'] });
    const d = check(text).diagnostics;
    expect(d.map((x) => [`${x.line}:${x.column} ${x.severity} ${x.code} ${x.message}`, x.hint])).toEqual([
      [
        '11:43 warning UNKNOWN_VARIABLE vars.plac is read here but nothing sets it (no vars:, save:, set: or ' +
          "foreach of 'plac')",
        "did you mean 'place'?",
      ],
    ]);
    const ok = qflow({
      extra: [
        '      announce:',
        '        say: "Number {{ vars.place.position }}, about {{ vars.place.expected_wait | say_duration }}."',
      ],
    });
    expect(diags(ok)).toEqual([]);
  });

  it("the announcement's spoken formats are checked (BAD_FILTER_ARGUMENT)", () => {
    const text = qflow({
      extra: ['      announce: { say: "About {{ vars.place.expected_wait | say_duration: \'weeks\' }}." }'],
    });
    // under the argument
    expect(diags(text)).toEqual([
      `11:75 error BAD_FILTER_ARGUMENT ${WHO} announce say_duration: 'weeks' is not the unit of the value ` +
        '(milliseconds, seconds, minutes, hours, days), and is not a locale this server knows',
    ]);
  });

  it('{ expr } agents are CEL: BAD_EXPRESSION, UNKNOWN_VARIABLE, a key beside expr, a secret', () => {
    expect(diags(qflow(agents('{ expr: "vars.team +" }')))).toEqual([
      `10:23 error BAD_EXPRESSION ${WHO} agents: invalid CEL expression: Unexpected token: EOF`,
    ]);
    expect(diags(qflow(agents('{ expr: "vars.tem" }')))).toEqual([
      '10:24 warning UNKNOWN_VARIABLE vars.tem is read here but nothing sets it (no vars:, save:, set: or ' +
        "foreach of 'tem')",
    ]);
    expect(diags(qflow(agents('{ expr: "vars.team", max: 3 }')))).toEqual([
      `10:36 error UNKNOWN_KEY ${WHO} agents: unknown key 'max' beside expr`,
    ]);
    const secret = qflow(agents('{ expr: "[secrets.TOKEN]" }')).replace('start: a', 'secrets: [TOKEN]\nstart: a');
    expect(diags(secret)).toEqual([
      "11:25 error SECRET_OUTSIDE_HTTP secrets.TOKEN is read outside an http step's url, headers, query or body",
    ]);
    const ok = check(qflow(agents('{ expr: "vars.team + [call.called]" }')));
    expect(ok.diagnostics).toEqual([]);
    const a = ok.model!.steps.a!;
    expect(a.kind === 'command' && a.queue?.agents).toEqual({ kind: 'expr', expr: 'vars.team + [call.called]' });
  });

  it('templates in agents and cli are checked (UNKNOWN_VARIABLE), and kept', () => {
    const text = qflow({ queue: [NAME, '      agents: ["{{ vars.tem }}"]'], extra: ['      cli: "{{ vars.clid }}"'] });
    expect(diags(text)).toEqual([
      '10:20 warning UNKNOWN_VARIABLE vars.tem is read here but nothing sets it (no vars:, save:, set: or ' +
        "foreach of 'tem')",
      '11:16 warning UNKNOWN_VARIABLE vars.clid is read here but nothing sets it (no vars:, save:, set: or ' +
        "foreach of 'clid')",
    ]);
  });
});

describe('queue: coverage keys', () => {
  const keys = (text: string) => {
    const { model } = check(text);
    return [...flowTransitions(compileFlow(model!, text)).all].filter((k) => k.startsWith('a:')).sort();
  };
  it('a step with an announcement and an error branch: every key of its machine', () => {
    const text = qflow({
      extra: ['      announce: { say: "Please hold." }'],
      on: [...BRANCHES, '      error: bye'],
    });
    expect(keys(text)).toEqual([
      'a:abandoned',
      'a:announce',
      'a:bridged',
      'a:empty',
      'a:error',
      'a:held',
      'a:noanswer',
      'a:ring',
      'a:timeout',
      'a:wait',
    ]);
  });
  it('no announcement: no a:announce (no state plays one)', () => {
    expect(keys(qflow())).not.toContain('a:announce');
    expect(keys(qflow())).toContain('a:held');
  });
});
