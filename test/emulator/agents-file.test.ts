/**
 * The agents file (`callscript emulator --agents agents.yaml`): loading, every check with its file:line:col, the
 * bounds it shares with caller scripts (2 MiB, nesting, aliases), hostile files, the JSON Schema agreeing, and the
 * command's flags (--agents, --speed) with its banner.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { emulator } from '../../src/cli/emulator.js';
import { readAgentsFile } from '../../src/emulator/agents/file.js';
import { loadAgentsFile } from '../../src/emulator/agents/load.js';
import { formatScriptErrors } from '../../src/emulator/caller/source.js';
import type { Emulator } from '../../src/emulator/server.js';
import { tempDirs } from './helpers.js';
import { ROOT } from './serve.js';

const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/agents.schema.json'), 'utf8'));
const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
const tempDir = tempDirs('agents-');

function errors(text: string): string[] {
  const r = loadAgentsFile(text, 'agents.yaml');
  if (r.ok) throw new Error('expected errors');
  return r.errors.map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`);
}

const DEFAULTS = { answer: true, answerAfterS: 3, talkS: 60 };
const E164 = 'an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. +33123456789)';

describe('loading', () => {
  it('a map of numbers to agents: fields, answer: false, nothing for the defaults; numbers quoted or not', () => {
    const r = loadAgentsFile(
      [
        '# yaml-language-server: $schema=../schemas/agents.schema.json',
        '"+447700900001": { answer_after: 5, talk: 120 }',
        '+447700900002: { answer: false }', // a YAML integer: taken as written
        '"+447700900003":',
        '"+447700900004": { answer_after: 0.5 }',
        '"+447700900005": { answer: true, answer_after: 0, talk: 1 }',
      ].join('\n'),
      'agents.yaml',
    );
    expect(r).toEqual({
      ok: true,
      agents: new Map([
        ['+447700900001', { answer: true, answerAfterS: 5, talkS: 120 }],
        ['+447700900002', { answer: false, answerAfterS: 3, talkS: 60 }],
        ['+447700900003', DEFAULTS],
        ['+447700900004', { answer: true, answerAfterS: 0.5, talkS: 60 }],
        ['+447700900005', { answer: true, answerAfterS: 0, talkS: 1 }],
      ]),
    });
  });

  it('JSON too; an empty file is no agents; $schema is allowed', () => {
    expect(loadAgentsFile('{"$schema": "x.json", "+447700900001": {"talk": 10}}', 'a.json')).toEqual({
      ok: true,
      agents: new Map([['+447700900001', { ...DEFAULTS, talkS: 10 }]]),
    });
    expect(loadAgentsFile('', 'a.yaml')).toEqual({ ok: true, agents: new Map() });
    expect(loadAgentsFile('# nothing yet\n', 'a.yaml')).toEqual({ ok: true, agents: new Map() });
  });

  it('aliases are followed', () => {
    const r = loadAgentsFile(
      '"+447700900001": &slow { answer_after: 20, talk: 300 }\n"+447700900002": *slow\n',
      'a.yaml',
    );
    expect(r.ok && [...r.agents.values()]).toEqual([
      { answer: true, answerAfterS: 20, talkS: 300 },
      { answer: true, answerAfterS: 20, talkS: 300 },
    ]);
  });
});

describe('every problem, at its line and column', () => {
  it('bad numbers, fields out of bounds or of the wrong type, unknown keys, contradictions, repeats', () => {
    expect(
      errors(
        [
          '"+447700900001": { answer_after: 301, talk: 0 }',
          '"0123": {}',
          '+447700900002: { answr: false }',
          '"+447700900004": { answer: false, talk: 5 }',
          '"+447700900005": 12',
          '+447700900001: {}',
          '"+447700900006": { answer: "no" }',
          '"+447700900007":',
          '  answer_after: "3"',
          '447700900008: {}',
          '"+999": {}',
          '"+447700900009": { talk: 86401, answer_after: -1 }',
        ].join('\n'),
      ),
    ).toEqual([
      '1:34 +447700900001.answer_after: answer_after is the seconds the agent rings before it answers: a number ' +
        'from 0 to 300, got 301',
      '1:45 +447700900001.talk: talk is the seconds the agent talks once bridged: a number from 1 to 86400, got 0',
      `2:1 0123: "0123" is not an E.164 number: ${E164}`,
      '3:18 +447700900002.answr: unknown key answr in agent +447700900002 (did you mean answer?); the keys are ' +
        'answer_after, talk, answer',
      '4:35 +447700900004.talk: talk does not apply: agent +447700900004 never answers (answer: false)',
      '5:18 +447700900005: agent +447700900005 is a map: { answer_after, talk } or { answer: false } (nothing for ' +
        'the defaults)',
      '6:1 +447700900001: +447700900001 is listed twice (first on line 1)',
      '7:28 +447700900006.answer: answer is false for an agent that never answers (true, the default, answers), ' +
        'got "no"',
      '9:17 +447700900007.answer_after: answer_after is the seconds the agent rings before it answers: a number ' +
        'from 0 to 300, got "3"',
      '10:1 447700900008: "447700900008" is not an E.164 number: it has no + (did you mean "+447700900008"?)',
      '11:1 +999: "+999" is not an E.164 number: not a possible phone number for its country code',
      '12:26 +447700900009.talk: talk is the seconds the agent talks once bridged: a number from 1 to 86400, got ' +
        '86401',
      '12:47 +447700900009.answer_after: answer_after is the seconds the agent rings before it answers: a number ' +
        'from 0 to 300, got -1',
    ]);
  });

  it('not a map; YAML syntax; a number written twice', () => {
    expect(errors('- "+447700900001"\n')).toEqual([
      '1:1 : the agents file is a map of E.164 numbers to agents, e.g. "+447700900001": { answer_after: 3, talk: 60 }',
    ]);
    expect(errors('"+447700900001": { talk: 5\n')).toEqual([
      '2:1 : Flow map in block collection must be sufficiently indented and end with a }',
    ]);
    expect(errors('"+447700900001": {}\n"+447700900001": { talk: 5 }\n')).toEqual([
      '2:1 +447700900001: +447700900001 is listed twice (first on line 1)',
    ]);
    expect(errors('"+447700900001": { talk: 5, talk: 0 }\n')).toEqual([
      '1:29 +447700900001.talk: talk is written twice in agent +447700900001',
    ]);
  });

  it('printed with a code frame, as caller scripts', () => {
    const text = '"+447700900001": { talk: 0 }\n';
    const r = loadAgentsFile(text, 'agents.yaml');
    expect(!r.ok && formatScriptErrors(r.errors, text)).toBe(
      [
        'agents.yaml:1:26 +447700900001.talk: talk is the seconds the agent talks once bridged: a number from 1 to ' +
          '86400, got 0',
        '  1 | "+447700900001": { talk: 0 }',
        '    |                          ^',
      ].join('\n'),
    );
  });
});

describe('hostile files', () => {
  const numbers = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => `+4477009${String(from + i).padStart(5, '0')}`);

  it('1,000 agents load, in order', () => {
    const list = numbers(1000);
    const r = loadAgentsFile(list.map((n, i) => `"${n}": { answer_after: ${i % 300}, talk: 30 }`).join('\n'), 'a.yaml');
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect([...r.agents.keys()]).toEqual(list);
      expect(r.agents.get(list[999]!)).toEqual({ answer: true, answerAfterS: 999 % 300, talkS: 30 });
    }
  });

  it('10,001 agents: one error at the first one over the limit', () => {
    const text = numbers(10_001)
      .map((n) => `"${n}":`)
      .join('\n');
    expect(errors(text)).toEqual(['10001:1 +447700910000: more than 10,000 agents: the emulator keeps at most that']);
  });

  it('1,000 bad agents: the first 100 problems, then one line that more follow', () => {
    const text = numbers(1000)
      .map((n) => `"${n}": { talk: 0 }`)
      .join('\n');
    const list = errors(text);
    expect(list).toHaveLength(101);
    expect(list[100]).toBe('101:1 : more problems follow: the first 100 are shown');
  });

  it('over 2 MiB, as a caller script: refused before it is parsed', () => {
    const text = `"+447700900001": {}\n#${'x'.repeat(2 * 1024 * 1024)}\n`;
    expect(errors(text)).toEqual([
      '1:1 : the file is 2,097,174 bytes; an agents file is at most 2,097,152 bytes (2 MiB), as a caller script',
    ]);
  });

  it('nested too deep; aliases that multiply (a billion laughs)', () => {
    expect(errors(`"+447700900001": ${'['.repeat(70)}${']'.repeat(70)}\n`)).toEqual([
      expect.stringMatching(/^1:\d+ : values are nested deeper than 64 levels$/),
    ]);
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      laughs.push(
        `${'abcdefghi'[i]}: &${'abcdefghi'[i]} [${Array(10)
          .fill(`*${'abcdefghi'[i - 1]}`)
          .join(', ')}]`,
      );
    expect(errors(laughs.join('\n'))).toEqual([
      '1:1 : the file is too big once its aliases are expanded (over 100,000 values)',
    ]);
  });

  it('from disk: a file over the bound is not read at all; a missing file; a directory', async () => {
    const dir = tempDir();
    const huge = join(dir, 'huge.yaml');
    writeFileSync(huge, '');
    truncateSync(huge, 3 * 1024 * 1024 * 1024); // sparse: 3 GiB that are never read
    expect(await readAgentsFile(huge)).toEqual({
      ok: false,
      message:
        `${huge}:1:1 the file is 3,221,225,472 bytes; an agents file is at most 2,097,152 bytes (2 MiB), ` +
        'as a caller script',
    });
    expect(await readAgentsFile(join(dir, 'none.yaml'))).toEqual({
      ok: false,
      message: `cannot read the agents file ${join(dir, 'none.yaml')}: ENOENT`,
    });
    expect(await readAgentsFile(dir)).toEqual({ ok: false, message: `the agents file ${dir} is not a file` });
  });
});

describe('schemas/agents.schema.json', () => {
  it.each([
    '"+447700900001": { answer_after: 3, talk: 60 }\n"+447700900002": { answer: false }\n"+447700900003":\n',
    '+447700900001: { answer: true, answer_after: 0 }\n',
    '{"$schema": "../schemas/agents.schema.json"}',
  ])('accepts what the loader accepts: %s', (text) => {
    expect(loadAgentsFile(text, 'a.yaml').ok).toBe(true);
    expect(validate(parse(text) ?? {}), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each([
    ['"0123": {}'],
    ['"+447700900001": { answr: 3 }'],
    ['"+447700900001": { answer_after: 301 }'],
    ['"+447700900001": { talk: 0 }'],
    ['"+447700900001": { talk: "60" }'],
    ['"+447700900001": { answer: false, talk: 5 }'],
    ['"+447700900001": { answer: "no" }'],
    ['"+447700900001": 12'],
    ['- "+447700900001"'],
  ])('rejects what the loader rejects: %s', (text) => {
    expect(loadAgentsFile(text, 'a.yaml').ok).toBe(false);
    expect(validate(parse(text))).toBe(false);
  });
});

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

describe('callscript emulator --agents, --speed', () => {
  const started: Emulator[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });
  async function run(flags: Parameters<typeof emulator>[0]) {
    const out = new Capture();
    const err = new Capture();
    const before = { int: process.listeners('SIGINT'), term: process.listeners('SIGTERM') };
    const r = await emulator({ port: '0', logLevel: 'silent', ...flags }, { LOG_FORMAT: 'json' }, out, err);
    for (const l of process.listeners('SIGINT')) if (!before.int.includes(l)) process.off('SIGINT', l);
    for (const l of process.listeners('SIGTERM')) if (!before.term.includes(l)) process.off('SIGTERM', l);
    if (typeof r !== 'number') started.push(r);
    return { r, out: out.text, err: err.text };
  }

  it('loads the file (the banner says how many agents), and runs real time faster', async () => {
    const file = join(tempDir(), 'agents.yaml');
    writeFileSync(file, '"+447700900001": { answer_after: 2 }\n"+447700900002": { answer: false }\n');
    const a = await run({ agents: file, realtime: true, speed: '10' });
    expect(a.err).toBe('');
    if (typeof a.r === 'number') throw new Error('not started');
    const base = /callscript emulator on (\S+)/.exec(a.out)![1]!;
    expect(a.out).toContain('  calls          real time x10, replies within 5000 ms\n');
    expect(a.out).toContain(`  agents         2 from ${file} (GET ${base}/emulator/agents)\n`);
    expect(a.r.ctx.calls.speed).toBe(10);
    expect(a.r.ctx.agents.views().map((v) => [v.number, v.answer_after])).toEqual([
      ['+447700900001', 2],
      ['+447700900002', undefined],
    ]);
    expect(a.out.trimEnd().split('\n').at(-1)).toMatch(/^run a call: /);
  });

  it('a bad file: exit 2 with each problem and its code frame; nothing listens', async () => {
    const file = join(tempDir(), 'agents.yaml');
    writeFileSync(file, '"+447700900001": { talk: 0 }\n');
    const a = await run({ agents: file });
    expect(a.r).toBe(2);
    expect(a.out).toBe('');
    expect(a.err).toBe(
      `callscript emulator: ${file}:1:26 +447700900001.talk: talk is the seconds the agent talks once bridged: a ` +
        'number from 1 to 86400, got 0\n' +
        '  1 | "+447700900001": { talk: 0 }\n' +
        '    |                          ^\n',
    );
  });

  it.each(['0', '1001', 'fast', ''])('--speed %j: exit 2', async (speed) => {
    const a = await run({ speed });
    expect(a.r).toBe(2);
    expect(a.err).toBe(
      'callscript emulator: --speed must be a number from 1 to 1000 (how many times faster real time runs), ' +
        `got ${speed}\n`,
    );
  });
});
