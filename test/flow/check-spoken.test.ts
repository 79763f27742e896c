/**
 * The checker on the spoken-format filters' literal arguments (src/flow/check-spoken.ts): an unknown locale or
 * currency, a style or a number the filter would refuse is BAD_FILTER_ARGUMENT, under the argument; arguments read
 * from variables are left to the call.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { spokenUses } from '../../src/flow/check-spoken.js';
import { NOT_LITERAL } from '../../src/flow/spoken-args.js';

const diag = (text: string) =>
  checkFlow(text, 'f.yaml').diagnostics.map(
    (d) => `${d.line}:${d.column}-${d.endColumn ?? ''} ${d.code} ${d.message}${d.hint ? ` | ${d.hint}` : ''}`,
  );
/** A version 2 flow in en-GB and fr-FR whose step a says `say` (line 8, the text from column 12). */
const flow = (say: string) =>
  [
    'version: 2',
    'start: a',
    'languages:',
    '  en-GB: { voice: TTS_EN-GB_SERENA }',
    '  fr-FR: { voice: TTS_FR-FR_AUDREY }',
    'vars: { n: 3, d: "2025-12-04", c: EUR, l: fr-FR }',
    'steps:',
    `  a: { say: ${JSON.stringify(say)}, next: b }`,
    '  b: { hangup: {} }',
  ].join('\n') + '\n';
const HINT =
  "Write a locale as a language tag ('fr-FR', 'en-GB', 'de'), a currency as its ISO 4217 code ('EUR', 'GBP', " +
  "'USD'), and the filter's words as docs/flow-language.md lists them (say_date: 'full', say_duration: " +
  "'minutes'). Without a locale, a filter speaks the call's language.";

describe('BAD_FILTER_ARGUMENT', () => {
  it('every filter with good literal arguments, and arguments from variables, validate', () => {
    expect(
      diag(
        flow(
          "{{ vars.n | say_digits: 2 }} {{ vars.n | say_number: 2, 'de-DE' }} {{ vars.n | say_ordinal: 'feminine' }} " +
            "{{ vars.n | say_money: 'EUR', 'name', 'fr-FR' }} {{ vars.n | say_money: vars.c, vars.l }} " +
            "{{ vars.n | say_duration: 'minutes' }} {{ vars.d | say_date: 'full', vars.l }} {{ vars.d | say_time }} " +
            "{% assign x = vars.n | say_money: 'GBP' %}{{ x }}",
        ),
      ),
    ).toEqual([]);
  });

  it('an unknown currency, under the literal', () => {
    expect(diag(flow("You owe {{ vars.n | say_money: 'EUX' }}."))).toEqual([
      "8:45-50 BAD_FILTER_ARGUMENT step 'a': say_money: 'EUX' is not a currency code (ISO 4217: EUR, GBP, " +
        `USD...) | ${HINT}`,
    ]);
  });

  it('an unknown locale, a locale written with _, a style with its did-you-mean', () => {
    expect(
      diag(
        flow(
          "{{ vars.n | say_number: 'xx-XX' }} {{ vars.d | say_date: 'full', 'fr_FR' }} " +
            "{{ vars.d | say_date: 'weekdy' }}",
        ),
      ),
    ).toEqual([
      `8:38-45 BAD_FILTER_ARGUMENT step 'a': say_number: 'xx-XX' is not a locale this server knows | ${HINT}`,
      "8:79-86 BAD_FILTER_ARGUMENT step 'a': say_date: 'fr_FR' is not a style (weekday, full, long, day), and is " +
        `not a language tag: write fr-FR | ${HINT}`,
      "8:112-120 BAD_FILTER_ARGUMENT step 'a': say_date: 'weekdy' is not a style (weekday, full, long, day), and " +
        "is not a locale this server knows | did you mean 'weekday'?",
    ]);
  });

  it('a missing currency (under the filter), too many arguments, a number out of bounds, named arguments', () => {
    expect(
      diag(
        flow(
          '{{ vars.n | say_money }} {{ vars.n | say_digits: 2, 3 }} {{ vars.n | say_number: 11 }} ' +
            "{{ vars.n | say_number: locale: 'fr-FR' }}",
        ),
      ),
    ).toEqual([
      "8:26-35 BAD_FILTER_ARGUMENT step 'a': say_money: the currency is missing (say_money: 'EUR', say_money: " +
        `'EUR', 'name' or say_money: 'EUR', 'fr-FR') | ${HINT}`,
      "8:66-67 BAD_FILTER_ARGUMENT step 'a': say_digits: takes at most 1 argument, got 2 (say_digits or " +
        `say_digits: 2) | ${HINT}`,
      "8:95-97 BAD_FILTER_ARGUMENT step 'a': say_number: the most decimals is a whole number from 0 to 10, not " +
        `11 | ${HINT}`,
      "8:125-140 BAD_FILTER_ARGUMENT step 'a': say_number: takes no named arguments nor lists: write its " +
        `arguments as values (say_number, say_number: 2 or say_number: 'fr-FR') | ${HINT}`,
    ]);
  });

  it('in prompt tables and set values too (every template)', () => {
    const text =
      [
        'version: 2',
        'start: a',
        'languages:',
        '  en-GB: { voice: TTS_EN-GB_SERENA }',
        'prompts:',
        '  owe: { en-GB: "You owe {{ vars.n | say_money: \'EURO\' }}." }',
        'vars: { n: 3 }',
        'steps:',
        '  a: { set: { s: "{{ vars.n | say_duration: \'weeks\' }}" }, next: b }',
        '  b: { say: { prompt: owe }, next: c }',
        '  c: { hangup: {} }',
      ].join('\n') + '\n';
    expect(diag(text).map((d) => d.split(' | ')[0])).toEqual([
      "6:49-55 BAD_FILTER_ARGUMENT prompt 'owe': say_money: 'EURO' is not a currency code (ISO 4217: EUR, " +
        'GBP, USD...)',
      "9:45-52 BAD_FILTER_ARGUMENT step 'a': set s: say_duration: 'weeks' is not the unit of the value " +
        '(milliseconds, seconds, minutes, hours, days), and is not a locale this server knows',
    ]);
  });

  it('hostile templates: thousands of arguments, 1,000 uses, unclosed quotes and brackets check quickly', () => {
    const started = performance.now();
    expect(diag(flow(`{{ vars.n | say_money: ${"'EUR', ".repeat(5000)}'fr-FR' }}`))).toEqual([
      "8:58-63 BAD_FILTER_ARGUMENT step 'a': say_money: takes at most 3 arguments, got more than 16 " +
        `(say_money: 'EUR', say_money: 'EUR', 'name' or say_money: 'EUR', 'fr-FR') | ${HINT}`,
    ]);
    expect(diag(flow("{{ vars.n | say_money: 'EUR', vars['l'] }} ".repeat(1000)))).toEqual([]);
    expect(spokenUses('{{ x | say_date: \'full, "fr-FR" }}').map((u) => u.args.length)).toEqual([1]);
    expect(spokenUses(`{{ x | say_date: ${'['.repeat(30000)} }}`).map((u) => u.args.length)).toEqual([1]);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('reads arguments as written: strings, numbers, nil, variables, brackets and quotes inside them', () => {
    const uses = spokenUses(
      "{{ x | say_money: 'EUR', vars['a,b'], 2 | upcase }}{% if y %}{{ y | say_date: nil, \"fr-FR\" }}{% endif %}",
    );
    expect(uses.map((u) => [u.filter, u.args.map((a) => a.value)])).toEqual([
      ['say_money', ['EUR', NOT_LITERAL, 2]],
      ['say_date', [null, 'fr-FR']],
    ]);
  });
});

describe('docs/flow-language.md', () => {
  it('the example of "Spoken formats" checks clean', () => {
    const doc = readFileSync(new URL('../../docs/flow-language.md', import.meta.url), 'utf8');
    const at = doc.indexOf('\n## Spoken formats');
    expect(at).toBeGreaterThan(0);
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
    expect(checkFlow(yaml, 'example.yaml').diagnostics).toEqual([]);
  });
});
