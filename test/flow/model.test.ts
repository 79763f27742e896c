/**
 * The FlowModel the checker produces: every shorthand expanded, exactly (deep equality,
 * positions included).
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import type { FlowModel, MediaSpec, Pos, Step } from '../../src/flow/model.js';

const FILE = 'flows/tour.yaml';
const P = (line: number, column: number): Pos => ({ file: FILE, line, column });
const FR = 'TTS_FR-FR_AUDREY';
const tts = (text: string, voice = FR): MediaSpec => ({ kind: 'tts', voice, text });

const TOUR = [
  'version: 1', // 1
  'name: shorthand-tour',
  'description: Every shorthand of the language',
  'start: welcome',
  'voice: TTS_FR-FR_AUDREY', // 5
  'vars: { tries: 0, vip: false, agent: "+33123456780", whisper_media: 1234 }',
  'handlers:',
  '  hangup: log',
  '  error: sorry',
  '  on:', // 10
  '    read: { "0": operator }',
  'steps:',
  '  welcome:',
  '    say: "Bonjour {{ call.caller }}"',
  '    next: menu', // 15
  '  menu:',
  '    read:',
  '      prompt: ["Tapez 1", 1234, { say: "Press 1", voice: TTS_EN-GB_DANIEL }, "TTS|NUANCE_FR_AUDREY|Tapez ' +
    '1 !", "{{ vars.whisper_media }}"]',
  '      max_digits: 4',
  '      timeout_ms: 5000', // 20
  '    save: choice',
  '    on:',
  '      "1": { goto: kill, say: "Un instant" }',
  '      "/9[0-9]*/": count',
  '      _2XX: count', // 25
  '      TIMEOUT: { retry: 3, then: bye }',
  '      error: sorry',
  '    next: { retry: 2, say: "Pardon ?", then: bye }',
  '  count:',
  '    set:', // 30
  '      tries: { expr: "vars.tries + 1" }',
  '      greeting: "Hello {{ vars.choice }}"',
  '      list: [1, "a", { k: null }]',
  '    next: route',
  '  route:', // 35
  '    switch:',
  "      - { when: 'vars.tries > 2', goto: bye }",
  '    default: check',
  '  check:',
  "    when: 'has(vars.vip) && vars.vip'", // 40
  '    then: room',
  '    else: kill',
  '  room:',
  '    conference: { id: 42, pin_code: 0123 }',
  '    next: operator', // 45
  '  kill:',
  '    hangup_callid: 18446744073709551615',
  '    next: operator',
  '  operator:',
  '    dialout:', // 50
  '      targets: ["+33123456789", { number: "{{ vars.agent }}", timeout: 30 }]',
  '      cli: BLOCKED',
  '      whisper: "{{ vars.whisper_media }}"',
  '    handlers: false',
  '    on:', // 55
  '      NOANSWER: bye',
  '  sorry: { play: "Désolé.", next: pause }',
  '  pause: { wait: 2, next: bye }',
  '  bye: { hangup: }',
  '  log: { set: { ended: true } }', // 60
].join('\n');

const none = { exact: {}, patterns: [] };

const EXPECTED: FlowModel = {
  version: 1,
  name: 'shorthand-tour',
  namePos: { file: FILE, line: 2, column: 7 },
  file: FILE,
  description: 'Every shorthand of the language',
  start: 'welcome',
  voice: FR,
  vars: { tries: 0, vip: false, agent: '+33123456780', whisper_media: 1234 },
  handlers: {
    hangup: 'log',
    error: { goto: 'sorry', pos: P(9, 10) },
    on: { read: { exact: { '0': { goto: 'operator', pos: P(11, 18) } }, patterns: [] } },
  },
  steps: {
    welcome: {
      kind: 'command',
      id: 'welcome',
      pos: P(13, 3),
      command: { name: 'play', params: {}, media: { media_id: [tts('Bonjour {{ call.caller }}')] } },
      on: { ...none, default: { goto: 'menu', pos: P(15, 11) } },
      inheritHandlers: true,
    },
    menu: {
      kind: 'command',
      id: 'menu',
      pos: P(16, 3),
      command: {
        name: 'read',
        params: { max_digits: 4, timeout_ms: 5000 },
        media: {
          media_id: [
            tts('Tapez 1'),
            { kind: 'id', id: 1234 },
            tts('Press 1', 'TTS_EN-GB_DANIEL'),
            tts('Tapez 1 !', 'NUANCE_FR_AUDREY'),
            { kind: 'raw', value: '{{ vars.whisper_media }}' },
          ],
        },
      },
      save: 'choice',
      on: {
        exact: {
          '1': { goto: 'kill', say: [tts('Un instant')], pos: P(23, 12) },
          TIMEOUT: { retry: 3, then: 'bye', pos: P(26, 16) },
        },
        patterns: [
          { source: '/9[0-9]*/', regex: '^(?:9[0-9]*)$', branch: { goto: 'count', pos: P(24, 20) } },
          { source: '_2XX', regex: '^2[0-9][0-9]$', branch: { goto: 'count', pos: P(25, 13) } },
        ],
        error: { goto: 'sorry', pos: P(27, 14) },
        default: { retry: 2, say: [tts('Pardon ?')], then: 'bye', pos: P(28, 11) },
      },
      inheritHandlers: true,
    },
    count: {
      kind: 'set',
      id: 'count',
      pos: P(29, 3),
      assign: [
        { name: 'tries', value: { kind: 'expr', expr: 'vars.tries + 1' }, pos: P(31, 7) },
        { name: 'greeting', value: { kind: 'literal', value: 'Hello {{ vars.choice }}' }, pos: P(32, 7) },
        { name: 'list', value: { kind: 'literal', value: [1, 'a', { k: null }] }, pos: P(33, 7) },
      ],
      next: 'route',
    },
    route: {
      kind: 'switch',
      id: 'route',
      pos: P(35, 3),
      cases: [{ when: 'vars.tries > 2', goto: 'bye', pos: P(37, 9) }],
      default: 'check',
    },
    check: {
      kind: 'switch',
      id: 'check',
      pos: P(39, 3),
      cases: [{ when: 'has(vars.vip) && vars.vip', goto: 'room', pos: P(40, 11) }],
      default: 'kill',
    },
    room: {
      kind: 'command',
      id: 'room',
      pos: P(43, 3),
      command: { name: 'conference', params: { id: '42', pin_code: '0123' }, media: {} },
      on: { ...none, default: { goto: 'operator', pos: P(45, 11) } },
      inheritHandlers: true,
    },
    kill: {
      kind: 'command',
      id: 'kill',
      pos: P(46, 3),
      command: { name: 'hangup_callid', params: { callid: '18446744073709551615' }, media: {} },
      on: { ...none, default: { goto: 'operator', pos: P(48, 11) } },
      inheritHandlers: true,
    },
    operator: {
      kind: 'command',
      id: 'operator',
      pos: P(49, 3),
      command: {
        name: 'dialout',
        params: { targets: [{ number: '+33123456789' }, { number: '{{ vars.agent }}', timeout: 30 }], cli: 'BLOCKED' },
        media: { whisper: [{ kind: 'raw', value: '{{ vars.whisper_media }}' }] },
      },
      on: { exact: { NOANSWER: { goto: 'bye', pos: P(56, 17) } }, patterns: [] },
      inheritHandlers: false,
    },
    sorry: {
      kind: 'command',
      id: 'sorry',
      pos: P(57, 3),
      command: { name: 'play', params: {}, media: { media_id: [tts('Désolé.')] } },
      on: { ...none, default: { goto: 'pause', pos: P(57, 35) } },
      inheritHandlers: true,
    },
    pause: {
      kind: 'command',
      id: 'pause',
      pos: P(58, 3),
      command: { name: 'wait', params: { wait: 2 }, media: {} },
      on: { ...none, default: { goto: 'bye', pos: P(58, 27) } },
      inheritHandlers: true,
    },
    bye: {
      kind: 'command',
      id: 'bye',
      pos: P(59, 3),
      command: { name: 'hangup', params: {}, media: {} },
      on: none,
      inheritHandlers: true,
    },
    log: {
      kind: 'set',
      id: 'log',
      pos: P(60, 3),
      assign: [{ name: 'ended', value: { kind: 'literal', value: true }, pos: P(60, 17) }],
    },
  },
};

describe('the flow model', () => {
  it('expands every shorthand into the canonical model', () => {
    const r = checkFlow(TOUR, FILE);
    expect(r.diagnostics).toEqual([]);
    expect(r.model).toStrictEqual(EXPECTED);
  });

  it('is plain JSON data', () => {
    const r = checkFlow(TOUR, FILE);
    expect(JSON.parse(JSON.stringify(r.model))).toStrictEqual(EXPECTED);
  });
});

/** A one-step flow around `step` (YAML flow-map text); returns the step's model. */
function one(step: string, extra = ''): Step {
  const r = checkFlow(`version: 1\nstart: s\n${extra}steps:\n  s: ${step}\n  end: { hangup: {} }\n`, 'one.yaml');
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  expect(errors, JSON.stringify(errors)).toEqual([]);
  return r.model!.steps.s!;
}

const cmd = (s: Step) => (s.kind === 'command' ? s.command : undefined);

describe('callids', () => {
  it('keeps 18446744073709551615 digit for digit (a YAML integer above 2^53)', () => {
    expect(cmd(one('{ hangup_callid: 18446744073709551615, next: end }'))!.params.callid).toBe('18446744073709551615');
    expect(cmd(one('{ hangup_callid: { callid: 18446744073709551615 }, next: end }'))!.params.callid).toBe(
      '18446744073709551615',
    );
  });

  it('takes a digit string, normalised to its decimal form', () => {
    expect(cmd(one('{ hangup_callid: "18446744073709551615", next: end }'))!.params.callid).toBe(
      '18446744073709551615',
    );
    expect(cmd(one('{ hangup_callid: "0042", next: end }'))!.params.callid).toBe('42');
  });

  it('keeps a template as written', () => {
    expect(cmd(one('{ hangup_callid: "{{ vars.other }}", next: end }', 'vars: { other: "1" }\n'))!.params.callid).toBe(
      '{{ vars.other }}',
    );
  });

  it('refuses negative numbers and floats', () => {
    for (const v of ['-1', '1.5', '"12a"']) {
      const r = checkFlow(`version: 1\nstart: s\nsteps:\n  s: { hangup_callid: ${v} }\n`, 'c.yaml');
      expect(
        r.diagnostics.map((d) => d.code),
        v,
      ).toContain(v === '1.5' ? 'TYPE_MISMATCH' : 'BAD_FORMAT');
    }
  });
});

describe('shorthands', () => {
  it('hangup:, hangup: null and hangup: {} are the same', () => {
    const want = { name: 'hangup', params: {}, media: {} };
    for (const v of ['{ hangup: }', '{ hangup: null }', '{ hangup: {} }']) {
      const r = checkFlow(`version: 1\nstart: s\nsteps:\n  s: ${v}\n`, 'h.yaml');
      expect(r.diagnostics).toEqual([]);
      expect(cmd(r.model!.steps.s!)).toStrictEqual(want);
    }
  });

  it('scalar params: play, play_record, send_dtmf, wait, stop_call_recording, play_wav_data', () => {
    expect(cmd(one('{ play: 1234, next: end }'))).toStrictEqual({
      name: 'play',
      params: {},
      media: { media_id: [{ kind: 'id', id: 1234 }] },
    });
    expect(cmd(one('{ play_record: "{{ vars.msg }}", next: end }', 'vars: { msg: x }\n'))).toStrictEqual({
      name: 'play_record',
      params: { media_file: '{{ vars.msg }}' },
      media: {},
    });
    expect(cmd(one('{ send_dtmf: 12#, next: end }'))).toStrictEqual({
      name: 'send_dtmf',
      params: { digits: '12#' },
      media: {},
    });
    expect(cmd(one('{ send_dtmf: 1234, next: end }'))).toStrictEqual({
      name: 'send_dtmf',
      params: { digits: '1234' },
      media: {},
    });
    expect(cmd(one('{ stop_call_recording: 0, next: end }'))).toStrictEqual({
      name: 'stop_call_recording',
      params: {},
      media: { announce: [{ kind: 'none' }] },
    });
    const wav = 'UklGRigAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQQAAAAAAAAA';
    expect(cmd(one(`{ play_wav_data: "${wav}", next: end }`))).toStrictEqual({
      name: 'play_wav_data',
      params: { audio_data: wav },
      media: {},
    });
  });

  it('media forms: digit strings are ids, "0" is none, a whole template is raw except in say:', () => {
    expect(cmd(one('{ play: "42", next: end }'))!.media.media_id).toStrictEqual([{ kind: 'id', id: 42 }]);
    expect(cmd(one('{ play: "0", next: end }'))!.media.media_id).toStrictEqual([{ kind: 'none' }]);
    expect(cmd(one('{ play: { say: "Hi", voice: TTS_EN-GB_DANIEL }, next: end }'))!.media.media_id).toStrictEqual([
      tts('Hi', 'TTS_EN-GB_DANIEL'),
    ]);
    expect(cmd(one('{ play: "{{ vars.m }}", next: end }', 'vars: { m: 1 }\n'))!.media.media_id).toStrictEqual([
      { kind: 'raw', value: '{{ vars.m }}' },
    ]);
    expect(cmd(one('{ say: "{{ vars.m }}", next: end }', 'vars: { m: 1 }\n'))!.media.media_id).toStrictEqual([
      tts('{{ vars.m }}', 'TTS_EN-GB_SERENA'),
    ]);
    expect(cmd(one('{ say: "Hi {{ vars.m }}!", next: end }', 'vars: { m: 1 }\n'))!.media.media_id).toStrictEqual([
      tts('Hi {{ vars.m }}!', 'TTS_EN-GB_SERENA'),
    ]);
  });

  it('record: with no value has no params; save keeps the result', () => {
    const s = one('{ record: , save: msg, next: end }');
    expect(s).toMatchObject({ kind: 'command', save: 'msg', command: { name: 'record', params: {}, media: {} } });
  });

  it('an unquoted +E.164 number (a YAML integer) is kept as written', () => {
    expect(
      cmd(
        one(
          '{ dialout: { targets: [{ number: +33123456789, timeout: 20 }], cli: +442079460150 }, on: { ' +
            'NOANSWER: end } }',
        ),
      )!.params,
    ).toStrictEqual({
      targets: [{ number: '+33123456789', timeout: 20 }],
      cli: '+442079460150',
    });
  });

  it('a target given as a string is { number }', () => {
    expect(cmd(one('{ dialout: { targets: "+33123456789" }, on: { NOANSWER: end } }'))!.params.targets).toStrictEqual([
      { number: '+33123456789' },
    ]);
  });

  it('Asterisk patterns become anchored regular expressions', () => {
    const s = one(
      '{ read: { prompt: Hi, max_digits: 8 }, on: { "_[1-3]N.": end, "_0!": end, "_*x-X": end, "/1|2/": end ' +
        '}, next: end }',
    );
    expect(s.kind === 'command' && s.on.patterns.map((p) => [p.source, p.regex])).toStrictEqual([
      ['_[1-3]N.', '^[1-3][2-9].+$'],
      ['_0!', '^0.*$'],
      ['_*x-X', '^\\*[0-9][0-9]$'],
      ['/1|2/', '^(?:1|2)$'],
    ]);
  });
});

describe('anchors and merge keys', () => {
  it('resolves aliases and << merges, explicit keys winning', () => {
    const text = [
      'version: 1',
      'start: a',
      'x-prompt: &ask { prompt: "Press 1", max_digits: 1, timeout_ms: 3000 }',
      'steps:',
      '  a:',
      '    read: { <<: *ask, timeout_ms: 8000 }',
      '    next: b',
      '  b:',
      '    read: *ask',
      '    next: c',
      '  c: { hangup: {} }',
    ].join('\n');
    const r = checkFlow(text, 'm.yaml');
    // x-prompt is not a top-level key: reported, the rest still checked
    expect(r.diagnostics.map((d) => `${d.code}@${d.line}:${d.column}`)).toEqual(['UNKNOWN_KEY@3:1']);
    const ok = checkFlow(text.replace('x-prompt: &ask', 'description: &ask'), 'm.yaml');
    expect(ok.diagnostics.map((d) => d.code)).toEqual(['TYPE_MISMATCH']); // description must be a string
  });

  it('merges shared params into steps', () => {
    const text = [
      'version: 1',
      'start: a',
      'vars: { base: &ask { prompt: "Press 1", max_digits: 1, timeout_ms: 3000 } }',
      'steps:',
      '  a:',
      '    read: { <<: *ask, timeout_ms: 8000 }',
      '    next: b',
      '  b:',
      '    read: *ask',
      '    next: c',
      '  c: { hangup: {} }',
    ].join('\n');
    const r = checkFlow(text, 'm.yaml');
    expect(r.diagnostics).toEqual([]);
    expect(cmd(r.model!.steps.a!)!.params).toStrictEqual({ max_digits: 1, timeout_ms: 8000 });
    expect(cmd(r.model!.steps.b!)!.params).toStrictEqual({ max_digits: 1, timeout_ms: 3000 });
  });

  it('reports errors inside an anchor at the anchor', () => {
    const text = [
      'version: 1',
      'start: a',
      'vars: { base: &ask { prompt: "Hi", max_digits: 30 } }',
      'steps:',
      '  a: { read: *ask, next: b }',
      '  b: { hangup: {} }',
    ].join('\n');
    const r = checkFlow(text, 'm.yaml');
    expect(r.diagnostics.map((d) => `${d.code}@${d.line}:${d.column}`)).toEqual(['OUT_OF_BOUNDS@3:48']);
  });
});
