/**
 * What a new user sees: one error per mistake, positions on the offending token, and
 * hints about the value that was checked (not a generic one for the code).
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { checkConfig } from '../../src/config/check.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';

const flow = (...steps: string[]) => ['version: 1', 'start: a', 'steps:', ...steps].join('\n') + '\n';
const diags = (text: string): Diagnostic[] => checkFlow(text, 't.yaml').diagnostics;
const short = (text: string) => diags(text).map((d) => `${d.line}:${d.column} ${d.code}`);
const only = (text: string, code: string): Diagnostic => {
  const ds = diags(text);
  expect(
    ds.map((d) => d.code),
    JSON.stringify(ds, null, 1),
  ).toEqual([code]);
  return ds[0]!;
};

describe('misspelt result keys under on:', () => {
  const read = (key: string) =>
    flow('  a:', '    read: { prompt: "Press 1" }', `    on: { "1": b, ${key}: b }`, '  b: { hangup: {} }');

  it.each([
    ['defualt', 'default'],
    ['Default', 'default'],
    ['DEFAULT', 'default'],
    ['eror', 'error'],
    ['Error', 'error'],
    ['timeout', 'TIMEOUT'],
    ['Timeout', 'TIMEOUT'],
    ['TIMOUT', 'TIMEOUT'],
  ])('%s on a read: did you mean %s?', (key, meant) => {
    const d = diags(read(key)).find((x) => x.code === 'IMPOSSIBLE_RESULT')!;
    expect(d.message).toContain(`'${key}' can never happen`);
    expect(d.hint).toBe(`did you mean '${meant}'?`);
  });

  it('a misspelt default or result is one error, not also an UNHANDLED_RESULT warning', () => {
    expect(short(read('defualt'))).toEqual(['6:19 IMPOSSIBLE_RESULT']);
  });

  it('suggests default and error on commands with an opaque result or none', () => {
    expect(
      only(
        flow('  a:', '    record: {}', '    save: msg', '    on: { defualt: b }', '  b: { hangup: {} }'),
        'IMPOSSIBLE_RESULT',
      ).hint,
    ).toBe("did you mean 'default'?");
    expect(
      only(
        flow('  a:', '    hangup_callid: 12', '    on: { eror: b }', '    next: b', '  b: { hangup: {} }'),
        'IMPOSSIBLE_RESULT',
      ).hint,
    ).toBe("did you mean 'error'?");
  });

  it('suggests enum result names case-insensitively', () => {
    const ds = diags(
      flow('  a:', '    wait_for_silence: {}', '    on: { silence: b, timeout: b }', '  b: { hangup: {} }'),
    );
    expect(ds.map((d) => `${d.code} ${d.hint}`)).toEqual([
      "IMPOSSIBLE_RESULT did you mean 'SILENCE'?",
      "IMPOSSIBLE_RESULT did you mean 'TIMEOUT'?",
    ]);
    const talk = only(
      flow('  a:', '    play_talk_detect: { prompt: "Hello" }', '    on: { talk: b, "0": b }', '  b: { hangup: {} }'),
      'IMPOSSIBLE_RESULT',
    );
    expect(talk.hint).toBe("did you mean 'TALK'?");
  });

  it('does not take a digit for a typo of another digit: it says which results exist', () => {
    const d = only(
      flow('  a:', '    play: "Hi"', '    on: { "2": b, default: b }', '  b: { hangup: {} }'),
      'IMPOSSIBLE_RESULT',
    );
    expect(d.message).toBe("step 'a': play returns 0, 1; '2' can never happen");
    expect(d.hint).not.toMatch(/did you mean/);
    expect(d.hint).toBe('play returns 0 or 1: use those as result keys, or default: (or next:) for any result.');
    const wait = only(flow('  a:', '    wait: 2', '    on: { "1": b }', '  b: { hangup: {} }'), 'IMPOSSIBLE_RESULT');
    expect(wait.hint).toBe('wait returns only 0: use it as result keys, or default: (or next:) for any result.');
  });

  it('flow-wide handlers suggest result names (default and error are MISPLACED_KEY there)', () => {
    const d = only(
      'version: 1\nstart: a\nhandlers:\n  on:\n    read: { timeout: a }\nsteps:\n  a: { hangup: {} }\n',
      'IMPOSSIBLE_RESULT',
    );
    expect(d.hint).toBe("did you mean 'TIMEOUT'?");
  });

  it('says "one key" for max_digits 1', () => {
    expect(diags(read('defualt'))[0]!.message).toContain(
      'read returns one key of 0-9 and * (max_digits: 1), or TIMEOUT',
    );
  });
});

describe('one typo, one error', () => {
  it('a misspelt required param is an UNKNOWN_KEY only, not also a MISSING_KEY', () => {
    const d = only(flow('  a:', '    read: { promt: "Hi" }', '    next: a'), 'UNKNOWN_KEY');
    expect(d).toMatchObject({
      line: 5,
      column: 13,
      message: "step 'a': unknown key 'promt' in read",
      hint: "did you mean 'prompt'?",
    });
    expect(only(flow('  a:', '    read: { media_i: 12 }', '    next: a'), 'UNKNOWN_KEY').hint).toBe(
      "did you mean 'media_id'?",
    );
    expect(only(flow('  a:', '    dialout: { target: ["+33123456789"] }'), 'UNKNOWN_KEY').hint).toBe(
      "did you mean 'targets'?",
    );
    expect(
      short(flow('  a:', '    sms: { to: "+33612345678", bdy: "hi" }', '    next: b', '  b: { hangup: {} }')),
    ).toEqual(['5:32 UNKNOWN_KEY']);
  });

  it('a param written beside its command (or misspelt there) is an UNKNOWN_KEY only', () => {
    expect(short(flow('  a:', '    read:', '    prompt: "Hi"', '    next: a'))).toEqual(['6:5 UNKNOWN_KEY']);
    const d = only(flow('  a:', '    read:', '    promt: "Hi"', '    next: a'), 'UNKNOWN_KEY');
    expect(d.hint).toBe(
      "did you mean 'prompt'? It is a parameter of read: indent it under read: (read: { prompt: ... }).",
    );
  });

  it('a typo of another param does not excuse a missing one', () => {
    expect(short(flow('  a:', '    read: { max_digit: 2 }', '    next: a'))).toEqual([
      '5:5 MISSING_KEY',
      '5:13 UNKNOWN_KEY',
    ]);
  });
});

describe('hints about the value checked', () => {
  const hintOf = (text: string, code: string) => {
    const d = diags(text).find((x) => x.code === code);
    expect(d, JSON.stringify(diags(text))).toBeDefined();
    return d!.hint!;
  };

  it('BAD_FORMAT: DTMF digits, locale, PIN, phone number, sender, URL, callid, voice', () => {
    const dtmf = hintOf(flow('  a: { send_dtmf: "12A", next: a }'), 'BAD_FORMAT');
    expect(dtmf).toMatch(/0-9, \* and #/);
    const locale = hintOf(flow('  a: { start_call_recording: { locale: english }, next: a }'), 'BAD_FORMAT');
    expect(locale).toMatch(/ll_CC, e\.g\. en_GB/);
    for (const h of [dtmf, locale]) expect(h).not.toMatch(/E\.164|pin_code|cdr_field/);
    expect(hintOf(flow('  a: { conference: { id: room1, pin_code: "12ab" } }'), 'BAD_FORMAT')).toMatch(
      /up to 10 digits/,
    );
    expect(hintOf(flow('  a: { dialout: { targets: ["0612345678"] } }'), 'BAD_FORMAT')).toMatch(/E\.164/);
    expect(
      hintOf(
        flow('  a: { sms: { to: "+33612345678", body: hi, from: "12345" }, next: b }', '  b: { hangup: {} }'),
        'BAD_FORMAT',
      ),
    ).toMatch(/at least one letter/);
    expect(
      hintOf(
        flow('  a: { sms: { to: "+33612345678", body: hi, webhook: "ftp://x" }, next: b }', '  b: { hangup: {} }'),
        'BAD_FORMAT',
      ),
    ).toMatch(/https?:\/\//);
    expect(hintOf(flow('  a: { hangup_callid: "12x", next: a }'), 'BAD_FORMAT')).toMatch(/call\.callid/);
    expect(hintOf('version: 1\nstart: a\nvoice: "bad voice"\nsteps:\n  a: { hangup: {} }\n', 'BAD_FORMAT')).toMatch(
      /TTS voice/,
    );
  });

  it('OUT_OF_BOUNDS: a command param names its command and bounds; retry and target timeout say what they are', () => {
    const md = hintOf(flow('  a:', '    read: { prompt: "Hi", max_digits: 25 }', '    next: a'), 'OUT_OF_BOUNDS');
    expect(md).toBe(
      'The telephony service accepts read max_digits from 1 to 20 (input ends when this many keys are ' +
        'pressed; 1 when not given).',
    );
    const retry = hintOf(flow('  a: { say: "x", next: { retry: 0, then: a } }'), 'OUT_OF_BOUNDS');
    expect(retry).toMatch(/^retry is how many times the step runs again/);
    expect(retry).toMatch(/\{ goto: step \}/);
    const timeout = hintOf(
      flow('  a: { dialout: { targets: [{ number: "+33123456789", timeout: 3 }] } }'),
      'OUT_OF_BOUNDS',
    );
    expect(timeout).toMatch(/^A target rings for timeout seconds, from 5 to 300/);
    for (const h of [retry, timeout]) expect(h).not.toMatch(/max_digits|service reference/);
  });

  it('OUT_OF_BOUNDS in callscript.yaml does not point at the service reference', () => {
    const d = checkConfig('server:\n  port: 70000\n', 'callscript.yaml').diagnostics;
    expect(d.map((x) => x.code)).toEqual(['OUT_OF_BOUNDS']);
    expect(d[0]!.hint).not.toMatch(/service reference|max_digits/);
  });
});

describe('mistakes the checker did not catch', () => {
  it('play_talk_detect with min_ms greater than max_ms', () => {
    const d = only(
      flow(
        '  a:',
        '    play_talk_detect: { prompt: "Hello", min_ms: 900, max_ms: 800 }',
        '    next: b',
        '  b: { hangup: {} }',
      ),
      'OUT_OF_BOUNDS',
    );
    expect(d).toMatchObject({ line: 5, column: 50, severity: 'error' });
    expect(d.message).toBe(
      "step 'a': play_talk_detect min_ms (900) is greater than max_ms (800): the shortest talk counted " +
        'cannot be longer than the longest one: no speech could ever be detected',
    );
    expect(d.hint).toBe('Make min_ms at most max_ms, e.g. min_ms: 800 or max_ms: 900.');
  });

  it('play_talk_detect with max_ms below the default min_ms', () => {
    const d = only(
      flow('  a:', '    play_talk_detect: { prompt: "Hello", max_ms: 300 }', '    next: b', '  b: { hangup: {} }'),
      'OUT_OF_BOUNDS',
    );
    expect(d.message).toMatch(/min_ms's default \(500\) is greater than max_ms \(300\)/);
    expect(d).toMatchObject({ line: 5, column: 50 });
  });

  it('play_talk_detect with min_ms equal to max_ms is fine', () => {
    expect(
      diags(
        flow(
          '  a:',
          '    play_talk_detect: { prompt: "Hello", min_ms: 800, max_ms: 800 }',
          '    next: b',
          '  b: { hangup: {} }',
        ),
      ),
    ).toEqual([]);
  });

  it('an sms with an empty body', () => {
    for (const body of ['""', '"   "']) {
      const d = only(
        flow('  a:', `    sms: { to: "+33612345678", body: ${body} }`, '    next: b', '  b: { hangup: {} }'),
        'BAD_FORMAT',
      );
      expect(d).toMatchObject({
        line: 5,
        column: 38,
        severity: 'error',
        message: "step 'a': sms body is empty: an SMS needs a text",
      });
      expect(d.hint).toMatch(/body: /);
    }
  });

  it('version 3 is "version must be 1 or 2, got 3"', () => {
    const d = only('version: 3\nstart: a\nsteps:\n  a: { hangup: {} }\n', 'BAD_VERSION');
    expect(d.message).toBe('version must be 1 or 2, got 3');
    expect(only('version: "1"\nstart: a\nsteps:\n  a: { hangup: {} }\n', 'BAD_VERSION')).toMatchObject({
      message: 'version must be 1 or 2, got a string ("1")',
      hint: 'Write version: 1 without quotes (an integer).',
    });
    expect(only('version: 1.5\nstart: a\nsteps:\n  a: { hangup: {} }\n', 'BAD_VERSION').message).toBe(
      'version must be 1 or 2, got 1.5',
    );
    expect(only('version: "2"\nstart: a\nsteps:\n  a: { hangup: {} }\n', 'BAD_VERSION').hint).toBe(
      'Write version: 2 without quotes (an integer).',
    );
  });

  it('a set of the hangup handler with next: to a hangup step: drop next', () => {
    const text =
      'version: 1\nstart: a\nhandlers: { hangup: log }\nsteps:\n  a: { say: "Hi", next: end }\n  log: { set: ' +
      '{ done: true }, next: end }\n  end: { hangup: {} }\n';
    const d = only(text, 'HANDLER_COMMAND');
    expect(d.message).toBe(
      "the hangup handler leads to command step 'end' (log -> end); the call is over when it runs",
    );
    expect(d.hint).toBe(
      "Drop `next: end` from 'log': without next, the handler ends the flow by itself (the call is already hung up).",
    );
  });

  it('the hangup handler on a say step, or a switch leading to one: other hints', () => {
    const say =
      'version: 1\nstart: a\nhandlers: { hangup: log }\nsteps:\n  a: { hangup: {} }\n  log: { set: { done: ' +
      'true }, next: bye }\n  bye: { say: "Bye" }\n';
    expect(only(say, 'HANDLER_COMMAND').hint).toMatch(/^Drop `next: bye` from 'log'.*nothing can be played/);
    const sw =
      'version: 1\nstart: a\nhandlers: { hangup: log }\nsteps:\n  a: { say: "Hi", next: end }\n  log: { ' +
      'when: "true", then: end, else: end }\n  end: { hangup: {} }\n';
    expect(only(sw, 'HANDLER_COMMAND').hint).toMatch(/^Make 'log' lead to logic steps only/);
    const self = 'version: 1\nstart: a\nhandlers: { hangup: a }\nsteps:\n  a: { hangup: {} }\n';
    expect(only(self, 'HANDLER_COMMAND').hint).toMatch(/already hung up.*remove handlers\.hangup/);
  });
});

describe('YAML errors at the offending column', () => {
  it('a key indented less than its siblings: at the key, not at column 1', () => {
    const d = only('version: 1\nstart: a\nsteps:\n  a:\n    say: hi\n   next: b\n', 'YAML_SYNTAX');
    expect(d).toMatchObject({ line: 6, column: 4, endLine: 6, endColumn: 8 });
  });

  it('a param indented less than the one above it', () => {
    const d = only(
      'version: 1\nstart: a\nsteps:\n  a:\n    read:\n      prompt: hi\n     max_digits: 2\n    next: a\n',
      'YAML_SYNTAX',
    );
    expect(d).toMatchObject({ line: 7, column: 6 });
  });

  it('a step indented less than the others', () => {
    expect(
      only('version: 1\nstart: a\nsteps:\n  a: { say: hi, next: b }\n b: { hangup: {} }\n', 'YAML_SYNTAX'),
    ).toMatchObject({ line: 5, column: 2 });
  });

  it('a list item out of line: one error, at the dash', () => {
    expect(short('version: 1\nstart: a\nsteps:\n  a:\n    say:\n      - x\n     - y\n')).toEqual(['7:6 YAML_SYNTAX']);
  });

  it('a tab stays at the tab', () => {
    expect(only('version: 1\nstart: a\nsteps:\n  a:\n  \t next: b\n', 'YAML_SYNTAX')).toMatchObject({
      line: 5,
      column: 3,
    });
  });
});

describe('carets on the name, not the whole template (issue #14 item 7)', () => {
  const long =
    `Hello {{ vars.name | default: 'caller' }}, your appointment with {{ vars.doctor | default: 'the doctor' ` +
    `}} is on {{ vars.day }} at {{ vars.time }}; to change it {{ vars.nmae }} press 1.`;

  it('an unknown variable in a 180-character template: the variable is underlined', () => {
    expect(long.length).toBeGreaterThan(170);
    const d = only(
      [
        'version: 1',
        'start: a',
        'vars: { name: Ann, doctor: Who, day: Monday, time: noon }',
        'steps:',
        `  a: { say: "${long}", next: b }`,
        '  b: { hangup: {} }',
      ].join('\n') + '\n',
      'UNKNOWN_VARIABLE',
    );
    const col = 13 + 1 + long.indexOf('vars.nmae');
    expect([d.line, d.column, d.endLine, d.endColumn]).toEqual([5, col, 5, col + 'vars.nmae'.length]);
    expect(d.hint).toBe("did you mean 'name'?");
  });

  it('in a block scalar, on the line the name is on; in a condition, at the name', () => {
    const block = only(
      [
        'version: 1',
        'start: a',
        'steps:',
        '  a:',
        '    say: |',
        '      Hello.',
        '      Your number is {{ call.calr }}.',
        '    next: b',
        '  b: { hangup: {} }',
      ].join('\n') + '\n',
      'UNKNOWN_VARIABLE',
    );
    expect([block.line, block.column, block.endColumn]).toEqual([7, 25, 34]);
    const cond = only(
      flow('  a: { when: "1 == 1 && call.calller == \'x\'", then: b, else: b }', '  b: { hangup: {} }'),
      'UNKNOWN_VARIABLE',
    );
    expect([cond.line, cond.column, cond.endColumn]).toEqual([4, 25, 37]);
  });

  it(
    'the same name twice in one text: the one that is reported ' + 'is the one underlined, escapes before it counted',
    () => {
      const d = diags(
        [
          'version: 1',
          'start: a',
          'steps:',
          '  a: { say: "\\"{{ vars.x }}\\" then {{ vars.x }}", next: b }',
          '  b: { hangup: {} }',
        ].join('\n') + '\n',
      );
      expect(d.map((x) => `${x.code}@${x.line}:${x.column}-${x.endColumn}`)).toEqual(['UNKNOWN_VARIABLE@4:19-25']);
    },
  );

  it('an unknown filter: the filter is underlined, with the nearest filter as a hint', () => {
    const d = only(
      flow('  a: { say: "Hello {{ call.caller | upcse }}", next: b }', '  b: { hangup: {} }'),
      'BAD_TEMPLATE',
    );
    expect([d.line, d.column, d.endColumn]).toEqual([4, 37, 42]);
    expect(d.message).toBe("step 'a': template does not parse: undefined filter: upcse");
    expect(d.hint).toBe("did you mean 'upcase'?");
  });
});

describe('the patterns of one flow are bounded in all (checking and compiling stay bounded)', () => {
  it('the key that takes the flow past the weight is BAD_PATTERN, the ones before are fine', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `      "/[0-9a-z]{900}x${i}/": a`);
    const ds = diags(
      [
        'version: 1',
        'start: a',
        'steps:',
        '  a:',
        '    record: { max_duration: 60 }',
        '    on:',
        ...keys,
        '      default: a',
      ].join('\n') + '\n',
    );
    expect(ds.map((d) => `${d.code}@${d.line}`)).toEqual([
      'BAD_PATTERN@29',
      'BAD_PATTERN@30',
      'BAD_PATTERN@31',
      'BAD_PATTERN@32',
      'BAD_PATTERN@33',
      'BAD_PATTERN@34',
      'BAD_PATTERN@35',
      'BAD_PATTERN@36',
    ]);
    expect(ds[0]!.message).toMatch(/the flow's patterns weigh more than 20,000 to compile in all/);
  });
});

describe('keys that are not data', () => {
  it('a __proto__ key in a value is refused (it would set the prototype, and be lost), at the key', () => {
    const d = only(
      'version: 1\nstart: a\nvars: { m: { __proto__: { x: 1 } } }\nsteps:\n  a: { hangup: {} }\n',
      'BAD_NAME',
    );
    expect([d.line, d.column]).toEqual([3, 14]);
    expect(d.message).toBe(
      'vars.m: a key named __proto__ cannot be kept in a value (it is the prototype of every JavaScript ' +
        'object); rename it',
    );
  });
});

describe('the graph checks run on what can be checked (issue #14 item 8)', () => {
  it('a step with an error elsewhere does not hide an unreachable step', () => {
    expect(
      short(flow('  a: { say: "Hi", next: b, colour: red }', '  b: { hangup: {} }', '  lost: { hangup: {} }')),
    ).toEqual(['4:28 UNKNOWN_KEY', '6:3 UNREACHABLE_STEP']);
  });

  it(
    'a step with errors may go wherever a step id is written ' + 'inside it: nothing it names is called unreachable',
    () => {
      expect(
        short(
          flow(
            '  a:',
            '    read: { prompt: "Hi", max_digits: 99 }',
            '    on: { "1": b, defualt: c }',
            '  b: { hangup: {} }',
            '  c: { hangup: {} }',
          ),
        ),
      ).toEqual(['5:39 OUT_OF_BOUNDS']);
    },
  );

  it(
    'a misspelt target is one UNKNOWN_STEP, not also an unreachable step (the did-you-mean, or else any step ' +
      'nothing names, is taken as meant)',
    () => {
      expect(short(flow('  a: { say: "Hi", next: mneu }', '  menu: { hangup: {} }'))).toEqual(['4:25 UNKNOWN_STEP']);
      expect(short(flow('  a: { say: "Hi", next: mnue }', '  menu: { hangup: {} }'))).toEqual(['4:25 UNKNOWN_STEP']);
      // a step that nothing names is still unreachable when every target is known
      expect(
        short(flow('  a: { say: "Hi", next: b, colour: red }', '  b: { hangup: {} }', '  menu: { hangup: {} }')),
      ).toEqual(['4:28 UNKNOWN_KEY', '6:3 UNREACHABLE_STEP']);
    },
  );

  it('no graph check without a start', () => {
    expect(short('version: 1\nsteps:\n  a: { hangup: {} }\n  b: { hangup: {} }\n')).toEqual(['1:1 MISSING_KEY']);
  });
});
