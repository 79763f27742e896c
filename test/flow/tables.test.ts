/**
 * The checker on calendars, prompt tables and languages, and environments (version 2):
 * exact diagnostics, one per mistake, and the bounds that keep hostile tables cheap.
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';

const diag = (text: string, environment?: string) =>
  checkFlow(text, 'f.yaml', environment === undefined ? {} : { environment }).diagnostics.map(
    (d) => `${d.line}:${d.column} ${d.code} ${d.message}${d.hint ? ` | ${d.hint}` : ''}`,
  );
const lines = (...l: string[]) => l.join('\n') + '\n';
const LANGS = ['languages:', '  en-GB: { voice: TTS_EN-GB_SERENA }', '  fr-FR: { voice: TTS_FR-FR_AUDREY }'];

describe('version 1 files', () => {
  it('each version 2 table is NEEDS_VERSION_2 once, at its key, and is checked as written', () => {
    const text = lines(
      'version: 1',
      'start: a',
      'calendars:',
      '  office: { timezone: UTC, weekly: { mon: "09:00-17:00" } }',
      ...LANGS,
      'prompts:',
      '  hi: { en-GB: "Hi.", fr-FR: "Salut." }',
      'environments:',
      '  staging: { n: "+442079460000" }',
      'steps:',
      '  a: { calendar: office, on: { open: b, closed: b } }',
      '  b: { say: { prompt: hi }, next: c }',
      '  c: { when: \'open("office") && env.n != ""\', then: d, else: d }',
      '  d: { hangup: {} }',
    );
    expect(diag(text)).toEqual([
      '3:1 NEEDS_VERSION_2 calendars: is part of version 2 of the language; this file declares version: 1 | ' +
        'Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds http, ' +
        'subflow, calendars, prompts, environments, sensitive and valid.',
      '5:1 NEEDS_VERSION_2 languages: is part of version 2 of the language; this file declares version: 1 | ' +
        'Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds http, ' +
        'subflow, calendars, prompts, environments, sensitive and valid.',
      '8:1 NEEDS_VERSION_2 prompts: is part of version 2 of the language; this file declares version: 1 | ' +
        'Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds http, ' +
        'subflow, calendars, prompts, environments, sensitive and valid.',
      '10:1 NEEDS_VERSION_2 environments: is part of version 2 of the language; this file declares version: ' +
        '1 | Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds ' +
        'http, subflow, calendars, prompts, environments, sensitive and valid.',
      '13:8 NEEDS_VERSION_2 calendar steps is part of version 2 of the language; this file declares version: ' +
        '1 | Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds ' +
        'http, subflow, calendars, prompts, environments, sensitive and valid.',
      '14:23 NEEDS_VERSION_2 prompt tables is part of version 2 of the language; this file declares version: ' +
        '1 | Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds ' +
        'http, subflow, calendars, prompts, environments, sensitive and valid.',
      '15:14 NEEDS_VERSION_2 open() and holiday() in conditions is part of version 2 of the language; this ' +
        'file declares version: 1 | Write `version: 2` at the top of the flow: version 2 keeps every version 1 ' +
        'construct and adds http, subflow, calendars, prompts, environments, sensitive and valid.',
    ]);
    expect(diag(text.replace('version: 1', 'version: 2'))).toEqual([]);
  });
});

describe('calendar steps', () => {
  const flow = (on: string) =>
    lines(
      'version: 2',
      'start: a',
      'calendars:',
      '  office: { timezone: UTC, weekly: { mon: "09:00-17:00" } }',
      'steps:',
      `  a: { calendar: office, on: ${on} }`,
      '  b: { hangup: {} }',
    );
  it('results are open, closed and holiday: a typo has its did-you-mean, a missing closed is MISSING_KEY', () => {
    expect(diag(flow('{ opne: b, closed: b }'))).toEqual([
      "6:32 IMPOSSIBLE_RESULT step 'a': a calendar step's results are open, closed and holiday, not 'opne' | " +
        "did you mean 'open'?",
    ]);
    expect(diag(flow('{ open: b }'))).toEqual([
      "6:26 MISSING_KEY step 'a': a calendar step needs on.closed: where to go when the calendar is closed | " +
        'A calendar step branches on open and closed (and holiday, which goes to closed when absent).',
    ]);
    expect(diag(flow('{ open: b, closed: b, holiday: c }'))).toEqual([
      "6:61 UNKNOWN_STEP no step 'c' in this flow | did you mean 'a'?",
    ]);
  });
});

describe('prompts and languages', () => {
  it('a prompt written in every language checks clean; call.language is a call field only with languages:', () => {
    const ok = lines(
      'version: 2',
      'start: a',
      ...LANGS,
      'prompts:',
      '  hi: { en-GB: "Hi.", fr-FR: ["Salut.", { say: "Bonjour.", voice: TTS_FR-FR_DENISE }, 1234] }',
      'steps:',
      '  a: { say: [{ prompt: hi }, "In {{ call.language }}."], next: b }',
      '  b: { hangup: {} }',
    );
    expect(diag(ok)).toEqual([]);
    const none = lines(
      'version: 2',
      'start: a',
      'steps:',
      '  a: { say: "In {{ call.language }}.", next: b }',
      '  b: { hangup: {} }',
    );
    expect(diag(none)).toEqual([
      "4:20 UNKNOWN_VARIABLE call.language is not a call field | did you mean 'language'?".replace(
        " | did you mean 'language'?",
        ' | Call fields: callid, caller, caller_name, called, app, cdr_field, request_hash, date_started, ' +
          'status, variables.',
      ),
    ]);
  });
  it('prompts: without languages:, and language: choices that are not declared', () => {
    expect(
      diag(lines('version: 2', 'start: a', 'prompts:', '  hi: { en-GB: "Hi." }', 'steps:', '  a: { hangup: {} }')),
    ).toEqual([
      '3:1 MISSING_KEY prompts: are written per language, and the flow has no languages: map | Declare the ' +
        'languages with their voices: languages: { en-GB: { voice: TTS_EN-GB_SERENA } }.',
    ]);
    expect(
      diag(
        lines(
          'version: 2',
          'start: a',
          ...LANGS,
          'language: { default: en-US, by_country: { FR: fr-FR, be: fr-FR }, variable: lang }',
          'steps:',
          '  a: { hangup: {} }',
        ),
      ),
    ).toEqual([
      "6:22 UNKNOWN_LANGUAGE language.default: 'en-US' is not a language of languages: | Languages: en-GB, fr-FR.",
      "6:54 BAD_FORMAT language.by_country: 'be' is not an ISO 3166 country code | did you mean 'BE' (Belgium)? " +
        'Write the ISO 3166 code of the country in two capitals: FR, BE, GB, US.',
    ]);
  });
  it('by_country keys that are not countries of a telephone number, with a did-you-mean', () => {
    const WRITE = 'Write the ISO 3166 code of the country in two capitals: FR, BE, GB, US.';
    const MAPS = "by_country maps the country of the caller's number to a language.";
    expect(
      diag(
        lines(
          'version: 2',
          'start: a',
          ...LANGS,
          'language:',
          '  by_country:',
          '    UK: en-GB',
          '    EN: en-GB',
          '    XX: fr-FR',
          '    FR: fr-FR',
          '    GB: en-GB',
          '    EU: en-GB',
          '    EL: fr-FR',
          'steps:',
          '  a: { hangup: {} }',
        ),
      ),
    ).toEqual([
      `8:5 BAD_FORMAT language.by_country: 'UK' is not an ISO 3166 country code | did you mean 'GB' (United ` +
        `Kingdom)? ${WRITE}`,
      `9:5 BAD_FORMAT language.by_country: 'EN' is not an ISO 3166 country code | 'en' is a language (English), ` +
        `not a country: did you mean 'GB' (United Kingdom)? ${MAPS}`,
      `10:5 BAD_FORMAT language.by_country: 'XX' is not an ISO 3166 country code | ${WRITE}`,
      `13:5 BAD_FORMAT language.by_country: 'EU' (European Union) is not the country of any telephone number | ` +
        `${MAPS} ${WRITE}`,
      `14:5 BAD_FORMAT language.by_country: 'EL' is not an ISO 3166 country code | 'el' is a language (Greek), ` +
        `not a country: did you mean 'GR' (Greece)? ${MAPS}`,
    ]);
  });
  it('a language tag that is not one', () => {
    expect(
      diag(
        lines(
          'version: 2',
          'start: a',
          'languages:',
          '  english: { voice: TTS_EN-GB_SERENA }',
          'steps:',
          '  a: { hangup: {} }',
        ),
      ),
    ).toEqual([
      "4:3 BAD_FORMAT languages: 'english' is not a language tag | Write a language tag: the language in " +
        'lowercase, then the country in uppercase, e.g. en-GB, fr-FR, fr-BE.',
    ]);
  });
});

describe('environments', () => {
  const ENVS = ['environments:', '  staging: { support: "+442079460000" }', '  production: { support: "+4420" }'];
  it('a checked param written as {{ env.x }} is checked with each environment, the diagnostic naming it', () => {
    const text = lines(
      'version: 2',
      'start: a',
      ...ENVS,
      'steps:',
      '  a:',
      '    dialout: { targets: ["{{ env.support }}"] }',
      '    on: { NOANSWER: b }',
      '  b: { hangup: {} }',
    );
    expect(diag(text)).toEqual([
      '8:26 BAD_FORMAT step \'a\': target: number in environment production is "+4420": not a possible phone ' +
        'number for its country code | Write the number in E.164: +, the country code, then the number without ' +
        'its leading 0, no spaces or dots (e.g. "+33123456789"). A value known only at run time can be a ' +
        'template ("{{ vars.x }}"), checked when the command is sent.',
    ]);
  });
  it(
    'a key missing in one environment is one diagnostic at that environment; a key read and defined nowhere ' +
      'one at the reference',
    () => {
      const text = lines(
        'version: 2',
        'start: a',
        'environments:',
        '  a1: { x: "1", y: "2" }',
        '  a2: { x: "1" }',
        '  a3: { y: "2" }',
        'steps:',
        '  a: { say: "{{ env.x }} {{ env.z }}", next: b }',
        '  b: { hangup: {} }',
      );
      expect(diag(text)).toEqual([
        "5:3 ENV_KEY_MISSING environment a2 has no 'y' (it is defined in another environment) | Give a2 a " +
          'value for y: every environment defines the same keys.',
        "6:3 ENV_KEY_MISSING environment a3 has no 'x' (it is defined in another environment) | Give a3 a " +
          'value for x: every environment defines the same keys.',
        "8:29 UNKNOWN_ENV_KEY env.z is read here but no environment defines 'z' | did you mean 'x'?",
      ]);
    },
  );
  it('values are literal text: a value holding {{ }} is not a template (validated as text, sent as written)', () => {
    const text = lines(
      'version: 2',
      'start: a',
      'environments:',
      '  dev: { greeting: "{{ call.caller }} {% include x %}" }',
      'steps:',
      '  a: { say: "{{ env.greeting }}", next: b }',
      '  b: { hangup: {} }',
    );
    const { model, diagnostics } = checkFlow(text, 'f.yaml');
    expect(diagnostics).toEqual([]);
    expect(model!.env).toEqual({ greeting: '{{ call.caller }} {% include x %}' });
  });
  it('selects the first environment, or the one asked for, into the model; an unknown one is refused', () => {
    const text = lines(
      'version: 2',
      'start: a',
      ...ENVS.slice(0, 2),
      '  production: { support: "+442079460001" }',
      'steps:',
      '  a: { hangup: {} }',
    );
    expect(checkFlow(text, 'f.yaml').model).toMatchObject({
      environment: 'staging',
      env: { support: '+442079460000' },
    });
    expect(checkFlow(text, 'f.yaml', { environment: 'production' }).model).toMatchObject({
      environment: 'production',
      env: { support: '+442079460001' },
    });
    expect(diag(text, 'qa')).toEqual([
      "3:1 UNKNOWN_ENVIRONMENT the environment 'qa' is selected (--env, environment: or CALLSCRIPT_ENV), and " +
        'this flow has no such environment | Its environments: staging, production.',
    ]);
    // a flow without environments: takes any selection
    expect(diag(lines('version: 1', 'start: a', 'steps:', '  a: { hangup: {} }'), 'qa')).toEqual([]);
  });
});

describe('hostile tables', () => {
  // CPU time: a busy machine slows the two readings compared alike less than it does wall time
  const timed = (text: string) => {
    const c0 = process.cpuUsage();
    const d = diag(text);
    const c = process.cpuUsage(c0);
    return { d, ms: (c.user + c.system) / 1000 };
  };
  it('100,000 holidays: one TOO_MANY_ENTRIES, in about the time the YAML takes to read', () => {
    const hol = Array.from({ length: 100_000 }, () => '"2026-12-25"').join(',');
    const plain = timed(lines('version: 2', 'start: a', 'vars:', `  h: [${hol}]`, 'steps:', '  a: { hangup: {} }'));
    const { d, ms } = timed(
      lines(
        'version: 2',
        'start: a',
        'calendars:',
        '  c:',
        '    timezone: UTC',
        '    weekly: { mon: "09:00-10:00" }',
        `    holidays: [${hol}]`,
        'steps:',
        '  a: { hangup: {} }',
      ),
    );
    expect(d).toEqual([
      "7:5 TOO_MANY_ENTRIES calendar 'c': 100,000 holidays; a calendar may list at most 2,000 dates " +
        '(holidays and exceptions) | Flows are untrusted input, and these tables are read at load and on ' +
        'calls: split the flow, or keep the tables within their bounds.',
    ]);
    expect(ms).toBeLessThan(plain.ms * 1.5 + 500);
  });
  it(
    '100,000 intervals in a day, 101 calendars, 51 languages, 5,001 prompts, 101 environments: one diagnostic ' +
      'each',
    () => {
      const iv = Array.from({ length: 100_000 }, () => '"09:00-10:00"').join(',');
      expect(
        timed(
          lines(
            'version: 2',
            'start: a',
            'calendars:',
            '  c:',
            '    timezone: UTC',
            `    weekly: { mon: [${iv}] }`,
            'steps:',
            '  a: { hangup: {} }',
          ),
        ).d,
      ).toEqual([
        "6:20 TOO_MANY_ENTRIES calendar 'c': mon: 100,000 intervals; a day may have at most 16 | Flows are " +
          'untrusted input, and these tables are read at load and on calls: split the flow, or keep the tables ' +
          'within their bounds.',
      ]);
      const many = (key: string, n: number, item: (i: number) => string) =>
        lines(
          'version: 2',
          'start: a',
          `${key}:`,
          ...Array.from({ length: n }, (_, i) => `  ${item(i)}`),
          'steps:',
          '  a: { hangup: {} }',
        );
      expect(diag(many('calendars', 101, (i) => `c${i}: { timezone: UTC, weekly: { mon: "09:00-10:00" } }`))).toEqual([
        expect.stringMatching(/^3:1 TOO_MANY_ENTRIES calendars: 101 calendars; a flow may have at most 100 \|/),
      ]);
      const langs = Array.from(
        { length: 51 },
        (_, i) =>
          `${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}-GB: { voice: V }`,
      );
      expect(
        diag(
          lines('version: 2', 'start: a', 'languages:', ...langs.map((l) => `  ${l}`), 'steps:', '  a: { hangup: {} }'),
        ),
      ).toEqual([
        expect.stringMatching(/^3:1 TOO_MANY_ENTRIES languages: 51 languages; a flow may declare at most 50 \|/),
      ]);
      expect(
        diag(
          lines(
            'version: 2',
            'start: a',
            ...LANGS,
            'prompts:',
            ...Array.from({ length: 5001 }, (_, i) => `  p${i}: { en-GB: "x", fr-FR: "y" }`),
            'steps:',
            '  a: { hangup: {} }',
          ),
        ),
      ).toEqual([
        expect.stringMatching(/^6:1 TOO_MANY_ENTRIES prompts: 5,001 prompts; a flow may have at most 5,000 \|/),
      ]);
      expect(diag(many('environments', 101, (i) => `e${i}: { x: "1" }`))).toEqual([
        expect.stringMatching(/^3:1 TOO_MANY_ENTRIES environments: 101 environments; a flow may have at most 100 \|/),
      ]);
    },
  );
  it('50 environments of 100 keys each, every checked param checked in each: fast', () => {
    const keys = Array.from({ length: 100 }, (_, k) => `k${k}: "+4420794600${String(k).padStart(2, '0')}"`).join(', ');
    const envs = Array.from({ length: 50 }, (_, i) => `  e${i}: { ${keys} }`);
    const steps = Array.from(
      { length: 100 },
      (_, k) =>
        `  s${k}: { dialout: { targets: ["{{ env.k${k} }}"] }, on: { NOANSWER: ${k === 99 ? 'end' : `s${k + 1}`} } }`,
    );
    const { d, ms } = timed(
      lines('version: 2', 'start: s0', 'environments:', ...envs, 'steps:', ...steps, '  end: { hangup: {} }'),
    );
    expect(d).toEqual([]);
    expect(ms).toBeLessThan(3000);
  });
});
