/** Caller scripts: loading, every check with its file:line:col, and the JSON Schema agreeing. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadCallerScript } from '../../src/emulator/caller/load.js';
import { formatScriptErrors } from '../../src/emulator/caller/source.js';
import { ROOT } from './serve.js';

const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/caller.schema.json'), 'utf8'));
const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
const FIXTURES = join(ROOT, 'test/fixtures/callers');
const fixtures = readdirSync(FIXTURES).flatMap((d) => readdirSync(join(FIXTURES, d)).map((f) => join(d, f)));

function errors(text: string) {
  const r = loadCallerScript(text, 'c.yaml');
  if (r.ok) throw new Error('expected errors');
  return r.errors.map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`);
}

describe('loading', () => {
  it('a full script: call fields, actions in order, defaults', () => {
    const r = loadCallerScript(
      [
        'name: demo',
        'call:',
        '  from: +447700900111', // a YAML number: taken as written
        '  to: "+442079460000"',
        '  name: Ada',
        '  date: "2026-11-23 10:00:00"',
        '  cdr_field: abc',
        '  status: INCOMING_CALL',
        '  variables: { a: 1 }',
        '  hangup_at: 120',
        '  max_commands: 50',
        'actions:',
        '  - read: 0042', // leading zeros kept
        '  - read: timeout',
        '  - play: failed',
        '  - dialout: { answer: 2, ring: 3, talk: 10, hangup_by: caller }',
        '  - conference: { pin: 2468, result: LEFT_CONFERENCE }',
        '  - error: 404', // a number as the error text
        '  - hangup_after: record',
        '  - hangup',
        'defaults:',
        '  read: TIMEOUT',
        '  play_talk_detect: talk',
      ].join('\n'),
      'demo.yaml',
    );
    if (!r.ok) throw new Error(formatScriptErrors(r.errors, ''));
    const s = r.script;
    expect(s.name).toBe('demo');
    expect(s.call).toEqual({
      from: '+447700900111',
      to: '+442079460000',
      name: 'Ada',
      date: '2026-11-23 10:00:00',
      cdr_field: 'abc',
      app: '',
      status: 'INCOMING_CALL',
      answer: 'ANSWER',
      variables: '{"a":1}',
      hangup_at: 120,
      max_commands: 50,
    });
    expect(s.actions.map((a) => [a.kind, a.label, a.where])).toEqual([
      ['command', 'read: "0042"', 'demo.yaml:13:5'],
      ['command', 'read: "timeout"', 'demo.yaml:14:5'],
      ['command', 'play: "failed"', 'demo.yaml:15:5'],
      ['command', 'dialout: {"answer":2,"ring":3,"talk":10,"hangup_by":"caller"}', 'demo.yaml:16:5'],
      ['command', 'conference: {"pin":2468,"result":"LEFT_CONFERENCE"}', 'demo.yaml:17:5'],
      ['error', 'error: 404', 'demo.yaml:18:5'],
      ['hangup_after', 'hangup_after: record', 'demo.yaml:19:5'],
      ['hangup', 'hangup', 'demo.yaml:20:5'],
    ]);
    expect(s.actions.map((a) => (a.kind === 'command' ? a.outcome : null))).toEqual([
      { digits: '0042' },
      { result: 'TIMEOUT' },
      { result: '1' },
      { answer: 2, ring: 3, talk: 10, hangup_by: 'caller' },
      { pins: ['2468'], result: 'LEFT_CONFERENCE' },
      null,
      null,
      null,
    ]);
    expect(s.defaults).toEqual({ read: { result: 'TIMEOUT' }, play_talk_detect: { result: 'TALK' } });
  });

  it('JSON scripts load too, with positions', () => {
    const r = loadCallerScript('{\n  "actions": [\n    {"read": "1"},\n    {"hangup": "dialout"}\n  ]\n}', 's.json');
    expect(r.ok && r.script.actions.map((a) => a.where)).toEqual(['s.json:3:5', 's.json:4:5']);
    expect(errors('{"actions": [{"raed": "1"}]}')).toEqual([
      '1:15 actions[0].raed: raed is not an action (did you mean read?); an action is a command (read, play, ' +
        'dialout...), error, hangup or hangup_after',
    ]);
  });

  it('an empty script is the default caller with defaults', () => {
    const r = loadCallerScript('', 'empty.yaml');
    expect(r.ok && r.script).toMatchObject({
      name: 'empty.yaml',
      actions: [],
      defaults: {},
      call: { from: '+447700900123', to: '+442079460000', status: 'UP' },
    });
  });
});

describe('every problem, at its file:line:col', () => {
  it.each([
    [
      'unknown top-level key',
      'acton:\n  - read: 1',
      [
        '1:1 acton: unknown key acton in the caller script (did you mean actions?); the keys are name, ' +
          'description, call, actions, defaults, $schema',
      ],
    ],
    ['YAML syntax', 'actions:\n  - read: [1\n', [expect.stringMatching(/^\d+:\d+ : /)]],
    ['not a map', '- read: 1', ['1:1 : a caller script must be a map']],
    [
      'unknown call key',
      'call:\n  form: "+447700900111"',
      [
        '2:3 call.form: unknown key form in call (did you mean from?); the keys are from, name, to, date, ' +
          'cdr_field, app, status, answer, variables, hangup_at, max_commands',
      ],
    ],
    [
      'a national number',
      'call:\n  from: "07700900111"',
      [
        '2:9 call.from: "07700900111" is not an E.164 number: an E.164 number is "+" then 2 to 15 digits, ' +
          'the first not 0 (e.g. +33123456789) ("" for a withheld number)',
      ],
    ],
    ['an empty to', 'call:\n  to: ""', [expect.stringMatching(/^2:7 call.to: "" is not an E.164 number/)]],
    [
      'a bad date',
      'call:\n  date: 2026-11-23',
      ['2:9 call.date: "2026-11-23": a datetime is YYYY-MM-DD HH:MM:SS (UTC)'],
    ],
    [
      'a bad cdr_field',
      'call:\n  cdr_field: "a b"',
      ['2:14 call.cdr_field: a cdr_field is at most 32 letters and digits'],
    ],
    [
      'a bad status',
      'call:\n  status: DOWN',
      ["2:11 call.status: call.status is the first request's call_status: UP or INCOMING_CALL"],
    ],
    [
      'a bad answer',
      'call:\n  answer: MAYBE',
      ['2:11 call.answer: call.answer (outbound calls) is one of ANSWER, NOANSWER, BUSY, CONGESTION, REJECTED'],
    ],
    ['variables as a list', 'call:\n  variables: [1]', ['2:14 call.variables: call.variables must be a map']],
    [
      'hangup_at 0',
      'call:\n  hangup_at: 0',
      [expect.stringMatching(/^2:14 call.hangup_at: call.hangup_at is the seconds/)],
    ],
    [
      'max_commands 0.5',
      'call:\n  max_commands: 0.5',
      ['2:17 call.max_commands: call.max_commands is a whole number from 1 to 10000'],
    ],
    ['actions not a list', 'actions:\n  read: 1', [expect.stringMatching(/^2:3 actions: actions must be a list/)]],
    [
      'two keys in an action',
      'actions:\n  - read: 1\n    play: 0',
      ['2:5 actions[0]: an action has exactly one key, this one has 2 (read, play); write one list item per action'],
    ],
    [
      'a scalar action',
      'actions:\n  - press 1',
      [
        '2:5 actions[0]: an action is a map of one key: a command and its outcome (read: "1"), error, hangup ' +
          'or hangup_after',
      ],
    ],
    [
      'the hangup command',
      'actions:\n  - hangup: hangup',
      [
        expect.stringMatching(
          /^2:13 actions\[0\].hangup: hangup names the command during which the caller hangs up, or any: "hangup" is not a command/,
        ),
      ],
    ],
    [
      'a misspelt command to hang up after',
      'actions:\n  - hangup_after: recrod',
      [expect.stringMatching(/"recrod" is not a command \(did you mean record\?\)/)],
    ],
    [
      'an empty error',
      'actions:\n  - error: ""',
      [expect.stringMatching(/^2:12 actions\[0\].error: error is the command_error/)],
    ],
    [
      'a read with letters',
      'actions:\n  - read: 12a',
      ['2:11 actions[0].read: "12a" is not a read outcome: the keys pressed (0-9, *, #) or TIMEOUT'],
    ],
    [
      'a play outcome',
      'actions:\n  - play: 2',
      ['2:11 actions[0].play: "2" is not a play outcome: "0" (played) or "1" (failed)'],
    ],
    [
      'a talk outcome',
      'actions:\n  - play_talk_detect: speech',
      [expect.stringMatching(/"speech" is not a play_talk_detect outcome: TALK/)],
    ],
    [
      'a silence outcome',
      'actions:\n  - wait_for_silence: QUIET',
      [expect.stringMatching(/"QUIET" is not a wait_for_silence outcome: SILENCE or TIMEOUT/)],
    ],
    [
      'a record outcome',
      'actions:\n  - record: forever',
      [expect.stringMatching(/"forever" is not a record outcome: the seconds the caller speaks/)],
    ],
    [
      'a dialout outcome',
      'actions:\n  - dialout: busy',
      [expect.stringMatching(/"busy" is not a dialout outcome: answer \(the first target answers\), noanswer/)],
    ],
    ['a dialout number', 'actions:\n  - dialout: "+1"', [expect.stringMatching(/"\+1": an E.164 number/)]],
    [
      'a conference outcome',
      'actions:\n  - conference: CLOSED',
      [
        '2:17 actions[0].conference: "CLOSED" is not a conference outcome: one of CONFERENCE_CLOSED, ' +
          'LAST_PARTICIPANT, LEFT_CONFERENCE, PIN_ERROR, PIN_TIMEOUT',
      ],
    ],
    [
      'a simple_conference outcome',
      'actions:\n  - simple_conference: LAST_PARTICIPANT',
      [expect.stringMatching(/is not a simple_conference outcome: leave or closed \(it has no result\)/)],
    ],
    [
      'a wait outcome',
      'actions:\n  - wait: 5',
      [expect.stringMatching(/"5" is not a wait outcome: ok, or a map \{ error: ... \} to make it fail/)],
    ],
    [
      'an unknown outcome field',
      'actions:\n  - dialout: { answer: 1, talkk: 5 }',
      [
        '2:27 actions[0].dialout.talkk: talkk is not a field of a dialout outcome (did you mean talk?); its ' +
          'fields are answer, ring, talk, hangup_by, error',
      ],
    ],
    [
      'an error with a result',
      'actions:\n  - play: { result: "0", error: X }',
      ['2:33 actions[0].play.error: a failing command has no other outcome: give error alone'],
    ],
    [
      'a PIN with letters',
      'actions:\n  - conference: { pin: "12ab" }',
      [expect.stringMatching(/^2:24 actions\[0\].conference.pin: "12ab" is not a PIN/)],
    ],
    [
      'negative seconds',
      'actions:\n  - record: { seconds: -1 }',
      [expect.stringMatching(/^2:24 actions\[0\].record.seconds: seconds must be a number of seconds/)],
    ],
    [
      'a bad hangup_by',
      'actions:\n  - dialout: { hangup_by: both }',
      ['2:27 actions[0].dialout.hangup_by: hangup_by is caller or callee'],
    ],
    [
      'a bad answer',
      'actions:\n  - dialout: { answer: 0 }',
      [expect.stringMatching(/^2:24 actions\[0\].dialout.answer: answer is the position of the target/)],
    ],
    [
      'a list outcome',
      'actions:\n  - read: [1, 2]',
      ['2:11 actions[0].read: a read outcome is a value or a map, not a list'],
    ],
    [
      'defaults of an unknown command',
      'defaults:\n  say: "0"',
      [expect.stringMatching(/^2:3 defaults.say: say is not a command with an outcome/)],
    ],
    [
      'defaults of hangup',
      'defaults:\n  hangup: ok',
      [expect.stringMatching(/^2:3 defaults.hangup: hangup is not a command with an outcome/)],
    ],
    [
      'a bad default',
      'defaults:\n  read: never',
      [expect.stringMatching(/^2:9 defaults.read: "never" is not a read outcome/)],
    ],
  ])('%s', (_name, text, want) => {
    expect(errors(text)).toEqual(want);
  });

  it('collects every problem of a script, and formats them with a code frame', () => {
    const text = 'call:\n  form: x\nactions:\n  - read: 12a\n  - raed: 1\n';
    const r = loadCallerScript(text, 'bad.yaml');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(3);
    expect(formatScriptErrors(r.errors, text)).toBe(
      [
        'bad.yaml:2:3 call.form: unknown key form in call (did you mean from?); the keys are from, name, to, ' +
          'date, cdr_field, app, status, answer, variables, hangup_at, max_commands',
        '  2 |   form: x',
        '    |   ^',
        'bad.yaml:4:11 actions[0].read: "12a" is not a read outcome: the keys pressed (0-9, *, #) or TIMEOUT',
        '  4 |   - read: 12a',
        '    |           ^',
        'bad.yaml:5:5 actions[1].raed: raed is not an action (did you mean read?); an action is a command ' +
          '(read, play, dialout...), error, hangup or hangup_after',
        '  5 |   - raed: 1',
        '    |     ^',
      ].join('\n'),
    );
  });
});

describe('schemas/caller.schema.json', () => {
  it.each(fixtures)('%s loads and is valid against the schema', (f) => {
    const text = readFileSync(join(FIXTURES, f), 'utf8');
    const r = loadCallerScript(text, f);
    expect(r.ok ? [] : formatScriptErrors(r.errors, text)).toEqual([]);
    const ok = validate(parse(text) ?? {});
    expect(ok, JSON.stringify(validate.errors)).toBe(true);
  });

  it.each([
    ['acton: []'],
    ['actions:\n  - raed: 1'],
    ['actions:\n  - read: 1\n    play: 0'],
    ['actions:\n  - play: 2'],
    ['actions:\n  - conference: CLOSED'],
    ['actions:\n  - dialout: { talkk: 5 }'],
    ['call:\n  status: DOWN'],
    ['call:\n  from: "07700900111"'],
    ['defaults:\n  say: "0"'],
  ])('the schema rejects what the loader rejects: %s', (text) => {
    expect(loadCallerScript(text, 'x.yaml').ok).toBe(false);
    expect(validate(parse(text))).toBe(false);
  });
});
