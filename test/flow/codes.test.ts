/**
 * One fixture per diagnostic code of src/errors/flow-codes.ts: the exact code, severity,
 * line and column (and the key words of the message or hint). A last test fails when a
 * code of the catalogue has no fixture here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLOW_CODES } from '../../src/errors/flow-codes.js';
import { checkFlow } from '../../src/flow/check.js';
import { checkConfig } from '../../src/config/check.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';
import { MAX_FILE_BYTES } from '../../src/flow/yaml.js';
import { TABLE_CASES } from './codes-tables.js';
import { SUBFLOW_CASES } from './codes-subflow.js';
import { LOOP_CASES } from './codes-loop.js';

/** A flow whose steps (lines given) start at line 4, column 3. */
const flow = (...steps: string[]) => ['version: 1', 'start: a', 'steps:', ...steps].join('\n') + '\n';

/** A version 2 flow with `sensitive: [pin]`. */
const sflow = (...steps: string[]) =>
  ['version: 2', 'sensitive: [pin]', 'start: a', 'steps:', ...steps].join('\n') + '\n';
/** A version 2 flow declaring the secret TOKEN, whose steps start at line 5, column 3. */
const flow2 = (...steps: string[]) =>
  ['version: 2', 'secrets: [TOKEN]', 'start: a', 'steps:', ...steps].join('\n') + '\n';

const WAV_44K_STEREO = 'UklGRigAAABXQVZFZm10IBAAAAABAAIARKwAABCxAgAEABAAZGF0YQQAAAAAAAAA';

interface Case {
  name: string;
  code: string;
  text: string | (() => Diagnostic[]);
  line: number;
  column: number;
  severity?: 'error' | 'warning';
  message?: RegExp;
  hint?: RegExp;
}

const CASES: Case[] = [
  { name: 'tab indentation', code: 'YAML_SYNTAX', text: flow('\ta: { hangup: {} }'), line: 4, column: 1 },
  {
    name: 'a step indented less than the others',
    code: 'YAML_SYNTAX',
    text: flow('  a: { say: "x", next: b }', ' b: { hangup: {} }'),
    line: 5,
    column: 2,
    message: /same column/,
  },
  { name: 'unclosed flow map', code: 'YAML_SYNTAX', text: flow('  a: { hangup: {}'), line: 5, column: 1 },
  {
    name: 'two documents',
    code: 'YAML_SYNTAX',
    text: flow('  a: { hangup: {} }') + '---\nversion: 1\n',
    line: 5,
    column: 1,
    message: /single YAML document/,
  },
  { name: 'unknown alias', code: 'YAML_SYNTAX', text: flow('  a: *nope'), line: 4, column: 6, message: /\*nope/ },
  {
    name: 'recursive alias',
    code: 'YAML_SYNTAX',
    text: flow('  a: &x { say: [*x], next: a }'),
    line: 4,
    column: 17,
    message: /recursive/,
  },
  {
    name: 'custom tag',
    code: 'YAML_SYNTAX',
    text: flow('  a: { say: !shout "hi" }'),
    line: 4,
    column: 13,
    message: /tag/,
  },
  {
    name: 'duplicate key',
    code: 'DUPLICATE_KEY',
    text: flow('  a: { say: "Hi", next: b }', '  b: { hangup: {} }', '  a: { hangup: {} }'),
    line: 6,
    column: 3,
    message: /duplicate key 'a' \(first at line 4, column 3\)/,
  },
  {
    name: 'alias and param name',
    code: 'DUPLICATE_KEY',
    text: flow('  a:', '    read: { prompt: "Hi", media_id: 12 }', '    next: a'),
    line: 5,
    column: 27,
    message: /'media_id' and 'prompt' are the same parameter of read/,
  },
  {
    name: 'a file over 2 MiB',
    code: 'FILE_TOO_LARGE',
    text: flow('  a: { hangup: {} }') + '#'.repeat(MAX_FILE_BYTES),
    line: 1,
    column: 1,
    message: /a file may be at most 2,097,152 bytes \(limits\.flow_file_bytes\)/,
  },
  {
    name: 'values 65 levels deep',
    code: 'TOO_DEEP',
    text: flow(`  a: { set: { x: ${'['.repeat(70)}1${']'.repeat(70)} }, next: b }`, '  b: { hangup: {} }'),
    line: 4,
    column: 79,
    message: /^values are nested more than 64 levels deep$/,
  },
  {
    name: 'an alias bomb',
    code: 'ALIAS_LIMIT',
    text: [
      'version: 1',
      'start: a',
      'vars:',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `  l${i}: &l${i} [${Array(10)
            .fill(i === 0 ? '"laugh"' : `*l${i - 1}`)
            .join(', ')}]`,
      ),
      'steps:',
      '  a: { hangup: {} }',
    ].join('\n'),
    line: 9,
    column: 22,
    message: /the alias \*l4 makes the aliases repeat more than 2,097,152 characters/,
  },
  {
    name: 'a template of 1,001 tags',
    code: 'BAD_TEMPLATE',
    text: flow(`  a: { say: "${Array(1001).fill('{{ vars.x }}').join(' ')}", next: b }`, '  b: { hangup: {} }'),
    line: 4,
    column: 13,
    message: /step 'a': the text holds 1,001 \{\{ \}\} or \{% %\} tags; a template may hold at most 1,000/,
  },
  {
    name: 'a list at top level',
    code: 'NOT_A_MAP',
    text: '- version: 1\n- start: a\n',
    line: 1,
    column: 1,
    message: /not a list/,
  },
  { name: 'empty file', code: 'NOT_A_MAP', text: '# nothing\n', line: 1, column: 1, message: /empty/ },
  {
    name: 'a step that is a string',
    code: 'NOT_A_MAP',
    text: flow('  a: hello'),
    line: 4,
    column: 6,
    message: /step 'a': a step must be a map/,
  },
  {
    name: 'typo in a read param',
    code: 'UNKNOWN_KEY',
    text: flow('  a:', '    read: { promt: "Hi" }', '    next: a'),
    line: 5,
    column: 13,
    message: /step 'a': unknown key 'promt' in read/,
    hint: /did you mean 'prompt'\?/,
  },
  {
    name: 'typo at top level',
    code: 'UNKNOWN_KEY',
    text: 'version: 1\nstart: a\nstpes: {}\n',
    line: 3,
    column: 1,
    hint: /did you mean 'steps'\?/,
  },
  {
    name: 'a param beside its command',
    code: 'UNKNOWN_KEY',
    text: flow('  a:', '    read:', '    prompt: "Hi"', '    next: a'),
    line: 6,
    column: 5,
    hint: /'prompt' is a parameter of read: indent it under read:/,
  },
  {
    name: 'typo in a command name',
    code: 'UNKNOWN_KEY',
    text: flow('  a: { hangpu: {} }'),
    line: 4,
    column: 8,
    hint: /did you mean 'hangup'\?/,
  },
  {
    name: 'no start',
    code: 'MISSING_KEY',
    text: 'version: 1\nsteps:\n  a: { hangup: {} }\n',
    line: 1,
    column: 1,
    message: /missing 'start'/,
  },
  {
    name: 'read without prompt',
    code: 'MISSING_KEY',
    text: flow('  a:', '    read: { max_digits: 2 }', '    next: a'),
    line: 5,
    column: 5,
    message: /read needs 'media_id' \(or its alias 'prompt'\)/,
  },
  {
    name: 'retry without then',
    code: 'MISSING_KEY',
    text: flow('  a:', '    read: { prompt: "Hi" }', '    on: { default: { retry: 2 } }'),
    line: 6,
    column: 20,
    message: /needs 'then'/,
  },
  {
    name: 'on: on a set step',
    code: 'MISPLACED_KEY',
    text: flow('  a: { set: { x: 1 }, on: { "1": a } }'),
    line: 4,
    column: 23,
    message: /'on' does not go with set/,
  },
  {
    name: 'next after hangup',
    code: 'MISPLACED_KEY',
    text: flow('  a: { hangup: {}, next: a }'),
    line: 4,
    column: 20,
    message: /'next' does not go with hangup/,
  },
  {
    name: 'quoted integer',
    code: 'TYPE_MISMATCH',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: "4" }', '    next: a'),
    line: 5,
    column: 39,
    message: /max_digits must be an integer \(1\.\.20\), not a string \("4"\)/,
    hint: /without quotes: max_digits: 4/,
  },
  {
    name: 'template in an integer param',
    code: 'TYPE_MISMATCH',
    text: flow('  a: { wait: "{{ vars.t }}", next: a }'),
    line: 4,
    column: 14,
    hint: /cannot be templates/,
  },
  {
    name: 'max_digits too large',
    code: 'OUT_OF_BOUNDS',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: 25 }', '    next: a'),
    line: 5,
    column: 39,
    message: /max_digits must be between 1 and 20, got 25/,
  },
  {
    name: 'wait too long',
    code: 'OUT_OF_BOUNDS',
    text: flow('  a: { wait: 31, next: a }'),
    line: 4,
    column: 14,
    message: /wait must be between 1 and 30, got 31/,
  },
  {
    name: 'retry 0',
    code: 'OUT_OF_BOUNDS',
    text: flow('  a: { say: "x", next: { retry: 0, then: a } }'),
    line: 4,
    column: 33,
    hint: /^retry is how many times/,
  },
  {
    name: 'min_ms over max_ms',
    code: 'OUT_OF_BOUNDS',
    text: flow('  a: { play_talk_detect: { prompt: "Hi", min_ms: 900, max_ms: 800 } }'),
    line: 4,
    column: 50,
    message: /min_ms \(900\) is greater than max_ms \(800\)/,
  },
  {
    name: 'national number',
    code: 'BAD_FORMAT',
    text: flow('  a:', '    dialout: { targets: [{ number: "0612345678", timeout: 30 }] }'),
    line: 5,
    column: 36,
    message: /number "0612345678": an E\.164 number/,
  },
  {
    name: 'letters in a PIN',
    code: 'BAD_FORMAT',
    text: flow('  a: { conference: { id: room1, pin_code: "12ab" } }'),
    line: 4,
    column: 43,
    message: /digits only, 10 at most/,
  },
  {
    name: 'an empty sms body',
    code: 'BAD_FORMAT',
    text: flow('  a: { sms: { to: "+33612345678", body: "" } }'),
    line: 4,
    column: 41,
    message: /sms body is empty/,
  },
  {
    name: 'callid beyond 64 bits',
    code: 'BAD_FORMAT',
    text: flow('  a: { hangup_callid: 18446744073709551616, next: a }'),
    line: 4,
    column: 23,
    message: /at most 18446744073709551615/,
  },
  {
    name: 'bad ringtone',
    code: 'BAD_ENUM',
    text: flow('  a:', '    dialout: { targets: ["+33123456789"], ringtone: RIGN }'),
    line: 5,
    column: 53,
    message: /ringtone must be one of MUSIC, RING, not "RIGN"/,
    hint: /did you mean 'RING'\?/,
  },
  {
    name: 'a version 2 construct in a version 1 file',
    code: 'NEEDS_VERSION_2',
    text: 'version: 1\nsensitive: [pin]\nstart: a\nsteps:\n  a: { hangup: {} }\n',
    line: 2,
    column: 1,
    message: /^sensitive: is part of version 2 of the language; this file declares version: 1$/,
  },
  {
    name: 'an http step in a version 1 file',
    code: 'NEEDS_VERSION_2',
    text: 'version: 1\nstart: a\nsteps:\n  a: { http: { url: "https://x.example/" }, next: b }\n  b: { hangup: {} }\n',
    line: 4,
    column: 8,
    message: /^http is part of version 2 of the language/,
  },
  {
    name: 'a Host header in an http step',
    code: 'FORBIDDEN_HEADER',
    text: flow2('  a: { http: { url: "https://x.example/", headers: { Host: y } }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 54,
    message: /'Host' is set by the engine/,
  },
  {
    name: 'a misspelt secret',
    code: 'UNKNOWN_SECRET',
    text: flow2(
      '  a: { http: { url: "https://x.example/", headers: { X-Key: "{{ secrets.TOKNE }}" } }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 5,
    column: 65,
    message: /^secrets\.TOKNE is not declared in secrets:$/,
    hint: /did you mean 'TOKEN'\?/,
  },
  {
    name: 'a secret in a prompt',
    code: 'SECRET_OUTSIDE_HTTP',
    text: flow2('  a: { say: "Your code is {{ secrets.TOKEN }}", next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 30,
    message: /secrets\.TOKEN is read outside an http step/,
  },
  {
    name: 'a secret in an http filler (spoken to the caller, not sent)',
    code: 'SECRET_OUTSIDE_HTTP',
    text: flow2(
      '  a: { http: { url: "https://x.example/?t={{ secrets.TOKEN }}", filler: "Code {{ secrets.TOKEN }}" }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 5,
    column: 82,
    message: /secrets\.TOKEN is read outside an http step/,
  },
  {
    name: 'a secret in a filler list entry',
    code: 'SECRET_OUTSIDE_HTTP',
    text: flow2(
      '  a: { http: { url: "https://x.example/", filler: ["One", { say: "{{ secrets.TOKEN }}" }] }, next: b }',
      '  b: { hangup: {} }',
    ),
    line: 5,
    column: 70,
    message: /secrets\.TOKEN is read outside an http step/,
  },
  {
    name: 'an http result that is not one',
    code: 'IMPOSSIBLE_RESULT',
    text: flow2('  a: { http: { url: "https://x.example/" }, on: { timout: b }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 51,
    message: /http has no result 'timout'/,
    hint: /did you mean 'timeout'\?/,
  },
  {
    name: 'a misspelt http url',
    code: 'UNKNOWN_KEY',
    text: flow2('  a: { http: { ulr: "https://x.example/" }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 16,
    message: /unknown key 'ulr' in http/,
    hint: /did you mean 'url'\?/,
  },
  {
    name: 'an http body over 64 KiB',
    code: 'OUT_OF_BOUNDS',
    text: flow2(
      `  a: { http: { url: "https://x.example/", body: { x: "${'y'.repeat(70000)}" } }, next: b }`,
      '  b: { hangup: {} }',
    ),
    line: 5,
    column: 49,
    message: /body is 70,008 bytes of JSON as written; a lookup's body is at most 65,536/,
  },
  {
    name: 'an http method in lower case',
    code: 'BAD_ENUM',
    text: flow2('  a: { http: { url: "https://x.example/", method: post }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 51,
    hint: /did you mean 'POST'\?/,
  },
  {
    name: 'an ftp URL',
    code: 'BAD_FORMAT',
    text: flow2('  a: { http: { url: "ftp://x.example/" }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 21,
    message: /is not an http:\/\/ or https:\/\/ URL/,
  },
  {
    name: 'http timeout_ms under 100',
    code: 'OUT_OF_BOUNDS',
    text: flow2('  a: { http: { url: "https://x.example/", timeout_ms: 50 }, next: b }', '  b: { hangup: {} }'),
    line: 5,
    column: 55,
    message: /timeout_ms must be between 100 and 30000, got 50/,
  },
  {
    name: 'version 3',
    code: 'BAD_VERSION',
    text: 'version: 3\nstart: a\nsteps:\n  a: { hangup: {} }\n',
    line: 1,
    column: 10,
    message: /^version must be 1 or 2, got 3$/,
  },
  {
    name: 'step id with a space',
    code: 'BAD_NAME',
    text: flow('  a: { say: "x", next: "b c" }', '  "b c": { hangup: {} }'),
    line: 5,
    column: 3,
    message: /step id 'b c'/,
  },
  {
    name: 'a step pattern over a flow-wide key',
    code: 'SHADOWED_HANDLER',
    text: [
      'version: 1',
      'start: a',
      'handlers:',
      '  on:',
      '    read: { "0": end }',
      'steps:',
      '  a:',
      '    read: { prompt: "Code?" }',
      '    on: { "/^[0-9]$/": end, default: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n'),
    line: 9,
    column: 11,
    severity: 'warning',
    message: /pattern \/\^\[0-9\]\$\/ matches "0"/,
  },
  {
    name: 'a step id every object has',
    code: 'BAD_NAME',
    text: flow('  a: { say: "x", next: end }', '  __proto__: { hangup: {} }', '  end: { hangup: {} }'),
    line: 5,
    column: 3,
    message: /step id '__proto__' is a reserved name/,
  },
  {
    name: 'a var every object has',
    code: 'BAD_NAME',
    text: flow('  a:', '    read: { prompt: "Hi" }', '    save: constructor', '    next: a'),
    line: 6,
    column: 11,
    message: /'constructor' is a reserved name/,
  },
  {
    name: 'save into a reserved word',
    code: 'BAD_NAME',
    text: flow('  a:', '    read: { prompt: "Hi" }', '    save: in', '    next: a'),
    line: 6,
    column: 11,
    message: /reserved word/,
  },
  {
    name: 'negative media id',
    code: 'BAD_MEDIA',
    text: flow('  a: { play: -5, next: a }'),
    line: 4,
    column: 14,
    message: /-5 is not a media id/,
  },
  {
    name: 'malformed TTS spec',
    code: 'BAD_MEDIA',
    text: flow('  a: { play: "TTS|bad voice|Hello", next: a }'),
    line: 4,
    column: 14,
    message: /not a voice id/,
  },
  {
    name: 'empty prompt list',
    code: 'BAD_MEDIA',
    text: flow('  a: { read: { prompt: [] }, next: a }'),
    line: 4,
    column: 24,
    message: /empty list/,
  },
  {
    name: '44.1 kHz stereo WAV',
    code: 'BAD_WAV',
    text: flow(`  a: { play_wav_data: "${WAV_44K_STEREO}", next: a }`),
    line: 4,
    column: 23,
    message:
      /^step 'a': audio_data: the WAV sample rate is 44100 Hz, not 8000 Hz, it has 2 channels, not 1 \(mono\); the service plays PCM 8000 Hz 16-bit mono only$/,
  },
  {
    name: 'not a WAV at all',
    code: 'BAD_WAV',
    text: flow('  a: { play_wav_data: "aGVsbG8gd29ybGQh", next: a }'),
    line: 4,
    column: 23,
    message: /not a WAV file/,
  },
  {
    name: 'unclosed template',
    code: 'BAD_TEMPLATE',
    text: flow('  a: { say: "Hello {{ vars.name", next: a }'),
    line: 4,
    column: 13,
  },
  {
    name: 'an include',
    code: 'FORBIDDEN_TAG',
    text: flow('  a: { say: "Hi {% include \'callscript.yaml\' %}", next: a }'),
    line: 4,
    column: 13,
    message: /^step 'a': \{% include %\} reads a file: templates have no file system$/,
  },
  {
    name: 'an unknown currency given to say_money',
    code: 'BAD_FILTER_ARGUMENT',
    text: flow('  a: { say: "You owe {{ 12.5 | say_money: \'EUX\' }}.", next: a }'),
    line: 4,
    column: 43,
    message: /^step 'a': say_money: 'EUX' is not a currency code \(ISO 4217: EUR, GBP, USD\.\.\.\)$/,
  },
  {
    name: 'a lookahead in matches()',
    code: 'BAD_PATTERN',
    text: flow('  a: { switch: [{ when: \'call.caller.matches("^(?=1)")\', goto: a }], default: a }'),
    line: 4,
    column: 25,
    message: /the pattern "\^\(\?=1\)" given to matches\(\) is refused: .*lookahead and lookbehind are not supported/,
  },
  {
    name: 'unknown filter',
    code: 'BAD_TEMPLATE',
    text: flow('  a: { say: "Hello {{ call.caller | shout }}", next: a }'),
    line: 4,
    column: 37,
    message: /undefined filter: shout$/,
  },
  {
    name: 'bad condition',
    code: 'BAD_EXPRESSION',
    text: flow('  a: { when: "vars.x ==", then: b, else: b }', '  b: { hangup: {} }'),
    line: 4,
    column: 14,
  },
  {
    name: 'bad expr in set',
    code: 'BAD_EXPRESSION',
    text: flow('  a: { set: { n: { expr: "1 +* 2" } }, next: b }', '  b: { hangup: {} }'),
    line: 4,
    column: 26,
  },
  {
    name: 'unclosed regex class',
    code: 'BAD_PATTERN',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: 4 }', '    on: { "/[0-9/": a, default: a }'),
    line: 6,
    column: 11,
    message: /invalid regular expression/,
  },
  {
    name: 'letter in an Asterisk pattern',
    code: 'BAD_PATTERN',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: 4 }', '    on: { _1A: a, default: a }'),
    line: 6,
    column: 11,
    message: /'A' is not allowed/,
  },
  {
    name: 'a saved group the pattern does not name',
    code: 'UNKNOWN_GROUP',
    text: sflow(
      '  a:',
      '    read: { prompt: "Code?", max_digits: 4 }',
      "    on: { '/^\\*(?<svc>[0-9]{2})$/': { goto: b, save: { pin: sv } }, default: b }",
      '  b: { hangup: {} }',
    ),
    line: 7,
    column: 61,
    message: /has no group named 'sv'/,
    hint: /did you mean 'svc'\?/,
  },
  {
    name: 'goto and retry',
    code: 'BAD_BRANCH',
    text: flow('  a: { say: "x", next: { goto: a, retry: 2, then: a } }'),
    line: 4,
    column: 35,
    message: /goto or retry, not both/,
  },
  {
    name: 'neither goto nor retry',
    code: 'BAD_BRANCH',
    text: flow('  a: { say: "x", next: { say: "Sorry" } }'),
    line: 4,
    column: 24,
  },
  {
    name: 'no action',
    code: 'NO_ACTION',
    text: flow('  a: { next: a }'),
    line: 4,
    column: 3,
    message: /step 'a': no action/,
  },
  {
    name: 'two actions',
    code: 'MANY_ACTIONS',
    text: flow('  a: { say: "x", wait: 2, next: a }'),
    line: 4,
    column: 18,
    message: /two actions, 'say' and 'wait'/,
  },
  {
    name: 'next and on.default',
    code: 'DUPLICATE_DEFAULT',
    text: flow('  a:', '    say: "x"', '    on: { default: a }', '    next: a'),
    line: 7,
    column: 5,
  },
  {
    name: 'two keys on max_digits 1',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: 1 }', '    on: { "12": a, default: a }'),
    line: 6,
    column: 11,
    message: /'12' has 2 keys/,
  },
  {
    name: 'a misspelt default',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    read: { prompt: "Hi" }', '    on: { "1": a, defualt: a }'),
    line: 6,
    column: 19,
    hint: /^did you mean 'default'\?$/,
  },
  {
    name: 'TALK on play',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    play: "Hi"', '    on: { TALK: a, default: a }'),
    line: 6,
    column: 11,
    message: /play returns 0, 1; 'TALK' can never happen/,
  },
  {
    name: 'a result of hangup_callid',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    hangup_callid: 12', '    on: { "0": a }'),
    line: 6,
    column: 11,
    message: /returns no result/,
  },
  {
    name: '# in a read result',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    read: { prompt: "Hi", max_digits: 4 }', '    on: { "12#": a, default: a }'),
    line: 6,
    column: 11,
    message: /# ends the input/,
  },
  {
    name: 'an exact record file name',
    code: 'IMPOSSIBLE_RESULT',
    text: flow('  a:', '    record: {}', '    on: { "msg.wav": a }'),
    line: 6,
    column: 11,
    message: /cannot be known in advance/,
  },
  {
    name: 'menu without TIMEOUT nor default',
    code: 'UNHANDLED_RESULT',
    severity: 'warning',
    text: flow('  a:', '    read: { prompt: "Press 1", max_digits: 1 }', '    on: { "1": b }', '  b: { hangup: {} }'),
    line: 5,
    column: 5,
    message: /read results TIMEOUT, '0', '2', '3', '4', '5', '6' and 4 other key sequences lead nowhere/,
  },
  {
    name: 'conference without PIN results',
    code: 'UNHANDLED_RESULT',
    severity: 'warning',
    text: flow(
      '  a:',
      '    conference: { id: room }',
      '    on: { CONFERENCE_CLOSED: b, LAST_PARTICIPANT: b, LEFT_CONFERENCE: b }',
      '  b: { hangup: {} }',
    ),
    line: 5,
    column: 5,
    message: /PIN_ERROR, PIN_TIMEOUT/,
  },
  {
    name: 'typo in a variable',
    code: 'UNKNOWN_VARIABLE',
    severity: 'warning',
    text: 'version: 1\nstart: a\nvars: { name: Ann }\nsteps:\n  a: { say: "Hi {{ vars.nmae }}" }\n',
    line: 5,
    column: 20,
    hint: /did you mean 'name'\?/,
  },
  {
    name: 'unknown call field',
    code: 'UNKNOWN_VARIABLE',
    severity: 'warning',
    text: flow('  a: { when: "call.calller == \'x\'", then: b, else: b }', '  b: { hangup: {} }'),
    line: 4,
    column: 15,
    hint: /did you mean 'caller'\?/,
  },
  {
    name: 'a prompt that is one template alone reads a variable holding text',
    code: 'MEDIA_TEMPLATE_TEXT',
    severity: 'warning',
    text:
      'version: 1\nstart: a\nvars: { greeting: "Welcome to Acme." }\nsteps:\n' +
      '  a: { read: { prompt: "{{ vars.greeting }}", max_digits: 1 }, next: b }\n  b: { hangup: {} }\n',
    line: 5,
    column: 24,
    message: /media_id is "\{\{ vars\.greeting \}\}" alone: .*vars\.greeting is text \("Welcome to Acme\.", vars:\)/,
    hint: /\{ say: "\{\{ vars\.greeting \}\}" \}/,
  },
  {
    name: 'a set expression reads a variable a read error leaves unset',
    code: 'MAYBE_UNSET',
    severity: 'warning',
    text: flow(
      '  a:',
      '    read: { prompt: "Code?", max_digits: 4 }',
      '    save: code',
      '    on: { error: b }',
      '    next: b',
      '  b:',
      '    set: { n: { expr: "int(vars.code) + 1" } }',
      '    next: c',
      '  c: { hangup: {} }',
    ),
    line: 10,
    column: 28,
    message: /vars\.code may not be set when step 'b' runs \(coming from 'a' by its error branch\)/,
    hint: /has\(vars\.x\)/,
  },
  // sensitive values (version 2)
  {
    name: 'a sensitive var in a say',
    code: 'SENSITIVE_RENDERED',
    severity: 'warning',
    text: sflow(
      '  a:',
      '    read: { prompt: "PIN?", max_digits: 4 }',
      '    save: pin',
      '    next: b',
      '  b: { say: "You typed {{ vars.pin }}.", next: c }',
      '  c: { hangup: {} }',
    ),
    line: 9,
    column: 27,
    message: /^vars\.pin is sensitive, and a say: text sends it to the telephony service in clear/,
  },
  {
    name: 'a sensitive var in an sms body',
    code: 'SENSITIVE_RENDERED',
    severity: 'warning',
    text: sflow(
      '  a:',
      '    read: { prompt: "PIN?", max_digits: 4 }',
      '    save: pin',
      '    next: b',
      '  b:',
      '    sms: { to: "{{ call.caller }}", body: "Your PIN: {{ vars.pin }}" }',
      '    next: c',
      '  c: { hangup: {} }',
    ),
    line: 10,
    column: 57,
    message: /the sms body sends it/,
  },
  {
    name: 'the sensitive result in a branch say',
    code: 'SENSITIVE_RENDERED',
    severity: 'warning',
    text: sflow(
      '  a:',
      '    read: { prompt: "PIN?", max_digits: 4 }',
      '    save: pin',
      '    on: { "0000": { goto: a, say: "{{ result }} is not allowed." } }',
      '    next: c',
      '  c: { hangup: {} }',
    ),
    line: 8,
    column: 39,
    message: /^result is the sensitive input of step 'a'/,
  },
  {
    name: 'a sensitive var copied by set',
    code: 'SENSITIVE_COPIED',
    severity: 'warning',
    text: sflow(
      '  a:',
      '    read: { prompt: "PIN?", max_digits: 4 }',
      '    save: pin',
      '    next: b',
      '  b: { set: { last: { expr: "vars.pin" } }, next: c }',
      '  c: { hangup: {} }',
    ),
    line: 9,
    column: 30,
    message: /set: copies it into 'last', which is not/,
    hint: /sensitive: \[pin, last\]/,
  },
  {
    name: 'a sensitive name nothing sets',
    code: 'UNKNOWN_VARIABLE',
    severity: 'warning',
    text:
      'version: 2\nsensitive: [pni]\nstart: a\nsteps:\n  a:\n    read: { prompt: "PIN?", max_digits: 4 }\n    ' +
      'save: pin\n    next: c\n  c: { hangup: {} }\n',
    line: 2,
    column: 13,
    message: /sensitive: 'pni' is a variable nothing sets/,
    hint: /did you mean 'pin'\?/,
  },
  {
    name: 'typo in a target',
    code: 'UNKNOWN_STEP',
    text: flow('  a: { say: "x", next: ned }', '  end: { hangup: {} }'),
    line: 4,
    column: 24,
    message: /no step 'ned'/,
    hint: /did you mean 'end'\?/,
  },
  {
    name: 'unknown start',
    code: 'UNKNOWN_STEP',
    text: 'version: 1\nstart: begin\nsteps:\n  a: { hangup: {} }\n',
    line: 2,
    column: 8,
  },
  {
    name: 'orphan step',
    code: 'UNREACHABLE_STEP',
    text: flow('  a: { hangup: {} }', '  b: { hangup: {} }'),
    line: 5,
    column: 3,
    message: /step 'b' is never reached/,
  },
  {
    name: 'two steps bouncing',
    code: 'NO_PATH_TO_END',
    text: flow('  a: { say: "x", next: b }', '  b: { say: "y", next: a }'),
    line: 4,
    column: 3,
    message: /step 'a' can never reach the end.*'b'/,
  },
  {
    name: 'set and when looping',
    code: 'EVENTLESS_LOOP',
    text: flow(
      '  a: { set: { x: 1 }, next: b }',
      '  b: { when: "vars.x > 0", then: a, else: c }',
      '  c: { hangup: {} }',
    ),
    line: 4,
    column: 3,
    message: /logic steps 'a' -> 'b' -> 'a' loop without issuing a command/,
  },
  {
    name: 'hangup handler on a command',
    code: 'HANDLER_COMMAND',
    text: 'version: 1\nstart: a\nhandlers: { hangup: a }\nsteps:\n  a: { hangup: {} }\n',
    line: 3,
    column: 21,
    message: /is a hangup step/,
  },
  {
    name: 'hangup handler leading to a command',
    code: 'HANDLER_COMMAND',
    text:
      'version: 1\nstart: a\nhandlers: { hangup: log }\nsteps:\n  a: { hangup: {} }\n  log: { set: { done: ' +
      'true }, next: bye }\n  bye: { say: "Bye" }\n',
    line: 3,
    column: 21,
    message: /leads to command step 'bye' \(log -> bye\)/,
    hint: /^Drop `next: bye` from 'log'/,
  },
  {
    name: 'flow-wide record handler',
    code: 'HANDLER_RESULTS',
    text: 'version: 1\nstart: a\nhandlers:\n  on:\n    record: { "/x/": a }\nsteps:\n  a: { hangup: {} }\n',
    line: 5,
    column: 5,
  },
  {
    name: 'auth without password',
    code: 'CONFIG_AUTH',
    text: () => checkConfig('auth:\n  login: me\n', 'callscript.yaml').diagnostics,
    line: 1,
    column: 1,
    message: /password is missing/,
  },
  {
    name: 'the checker itself fails',
    code: 'INTERNAL_ERROR',
    text: () =>
      checkFlow(
        {
          toString() {
            throw new Error('boom');
          },
        } as unknown as string,
        'x.yaml',
      ).diagnostics,
    line: 1,
    column: 1,
    message: /boom/,
  },
  ...SUBFLOW_CASES,
];
// calendars, prompt tables and languages, environments (version 2)
CASES.push(...TABLE_CASES);
// foreach steps (version 2)
CASES.push(...LOOP_CASES);

describe('every diagnostic code, at its exact position', () => {
  for (const c of CASES) {
    it(`${c.code}: ${c.name}`, () => {
      const diags = typeof c.text === 'string' ? checkFlow(c.text, 'flows/t.yaml').diagnostics : c.text();
      const found = diags.filter((d) => d.code === c.code);
      expect(found, JSON.stringify(diags, null, 1)).not.toHaveLength(0);
      const d = found[0]!;
      expect({ line: d.line, column: d.column, severity: d.severity }).toEqual({
        line: c.line,
        column: c.column,
        severity: c.severity ?? 'error',
      });
      if (c.message) expect(d.message).toMatch(c.message);
      if (c.hint) expect(d.hint).toMatch(c.hint);
      expect(d.hint, 'every diagnostic has a hint').toBeTruthy();
    });
  }

  it('has a fixture for every code of the catalogue', () => {
    const covered = new Set(CASES.map((c) => c.code));
    expect(FLOW_CODES.map((c) => c.code).filter((c) => !covered.has(c))).toEqual([]);
  });

  it('gives each catalogue severity to its diagnostics', () => {
    for (const c of CASES)
      expect(FLOW_CODES.find((x) => x.code === c.code)?.severity, c.code).toBe(c.severity ?? 'error');
  });
});

describe('a model only without errors', () => {
  it('keeps the model when there are warnings only', () => {
    const r = checkFlow(
      flow('  a:', '    read: { prompt: "Press 1" }', '    on: { "1": b }', '  b: { hangup: {} }'),
      't.yaml',
    );
    expect(r.diagnostics.map((d) => d.severity)).toEqual(['warning']);
    expect(r.model).toBeDefined();
  });

  it('gives no model when there is an error', () => {
    const r = checkFlow(flow('  a: { wait: 99 }'), 't.yaml');
    expect(r.model).toBeUndefined();
  });

  it('sorts diagnostics by position', () => {
    const r = checkFlow(flow('  a: { wait: 99, next: b }', '  b: { wait: 0, next: c }', '  c: { wat: 1 }'), 't.yaml');
    const at = r.diagnostics.map((d) => [d.line, d.column]);
    expect(at).toEqual([...at].sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!));
    expect(r.diagnostics.map((d) => d.code)).toEqual(['OUT_OF_BOUNDS', 'OUT_OF_BOUNDS', 'UNKNOWN_KEY']);
  });
});

describe('a step with errors still declares its save: (one mistake, one diagnostic)', () => {
  const withSave = (extra: string) =>
    [
      'version: 1',
      'start: a',
      'steps:',
      '  a:',
      '    read: { prompt: "PIN?", max_digits: 4' + extra + ' }',
      '    save: pin',
      '    next: b',
      '  b: { say: "You typed {{ vars.pin }}.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
  it.each([
    ['an unknown key in the step', withSave(', colour: red'), 'UNKNOWN_KEY'],
    ['a bad value in the step', withSave('').replace('max_digits: 4', 'max_digits: "4x"'), 'TYPE_MISMATCH'],
  ])('%s: its own error only, no UNKNOWN_VARIABLE where the saved variable is read', (_name, text, code) => {
    const { diagnostics } = checkFlow(text, 'save.yaml');
    expect(diagnostics.map((d) => d.code)).toEqual([code]);
  });

  it('a set: step with a bad value still declares the variable', () => {
    const text = [
      'version: 1',
      'start: a',
      'steps:',
      '  a:',
      '    set: { n: { expr: "1 +" } }',
      '    next: b',
      '  b: { say: "{{ vars.n }}", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    const { diagnostics } = checkFlow(text, 'set.yaml');
    expect(diagnostics.map((d) => d.code)).toEqual(['BAD_EXPRESSION']);
  });
});

describe('SHADOWED_HANDLER', () => {
  const text = (stepOn: string) =>
    [
      'version: 1',
      'start: a',
      'handlers:',
      '  on:',
      '    read: { "0": op }',
      'steps:',
      '  a:',
      '    read: { prompt: "Code?", max_digits: 4 }',
      `    on: { ${stepOn}, default: end }`,
      '  op: { say: "Operator.", next: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
  it('warns at a step pattern that matches a flow-wide handler key, naming both', () => {
    const { diagnostics, model } = checkFlow(text('"/^[0-9]+$/": end'), 'shadow.yaml');
    expect(model).toBeDefined();
    expect(diagnostics.map((d) => [d.code, d.severity, d.line, d.column, d.message])).toEqual([
      [
        'SHADOWED_HANDLER',
        'warning',
        9,
        11,
        'step \'a\': the pattern /^[0-9]+$/ matches "0", so the flow-wide handlers.on key "0" never applies ' +
          'at this step',
      ],
    ]);
  });
  it('says nothing when the step handles the key itself, or the pattern does not match it', () => {
    expect(checkFlow(text('"0": op, "/^[0-9]+$/": end'), 'shadow.yaml').diagnostics).toEqual([]);
    expect(checkFlow(text('"/^[1-9][0-9]*$/": end'), 'shadow.yaml').diagnostics).toEqual([]);
  });
});

describe('one tab used as indentation', () => {
  it('is one YAML_SYNTAX error at the tab, not one per following line', () => {
    const text = readFileSync(new URL('../../flows/front-desk.yaml', import.meta.url), 'utf8').replace(
      '\n      max_digits: 1\n',
      '\n\tmax_digits: 1\n',
    );
    const line = text.split('\n').indexOf('\tmax_digits: 1') + 1;
    expect(line).toBeGreaterThan(1);
    const { diagnostics } = checkFlow(text, 'front-desk.yaml');
    expect(diagnostics.map((d) => [d.code, d.line, d.column, d.message])).toEqual([
      ['YAML_SYNTAX', line, 1, 'YAML: Tabs are not allowed as indentation'],
    ]);
  });
});

describe('SHADOWED_HANDLER on hostile patterns', () => {
  it('a catastrophic pattern against a long flow-wide key does not hang the checker', () => {
    const key = '0'.repeat(40) + 'x';
    const text = [
      'version: 1',
      'start: a',
      'handlers:',
      '  on:',
      `    read: { "${key}": end }`,
      'steps:',
      '  a:',
      '    read: { prompt: "Code?", max_digits: 30 }',
      '    on: { "/^(0+)+$/": end, default: end }',
      '  end: { hangup: {} }',
      '',
    ].join('\n');
    const { diagnostics } = checkFlow(text, 'evil.yaml');
    expect(diagnostics.filter((d) => d.code === 'SHADOWED_HANDLER')).toEqual([]);
  });
});
