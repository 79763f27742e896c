/**
 * The examples of the chapters "Calendars", "Prompt tables and languages" and
 * "Environments" of docs/flow-language.md check clean, and the schema accepts them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { checkFlow } from '../../src/flow/check.js';
import { flowJsonSchema } from '../../src/flow/schema.js';

const doc = readFileSync(new URL('../../docs/flow-language.md', import.meta.url), 'utf8');

function chapter(title: string): string {
  const at = doc.indexOf(`\n## ${title}`);
  expect(at).toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', at + 1);
  return doc.slice(at, end < 0 ? undefined : end);
}

function firstYaml(text: string): string {
  const m = /```yaml\n([\s\S]*?)```/.exec(text);
  expect(m).not.toBeNull();
  return m![1]!;
}

describe('the version 2 chapters of docs/flow-language.md', () => {
  const validate = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(
    flowJsonSchema(),
  );
  for (const title of [
    'Calendars: `calendars` and `calendar`',
    'Prompt tables and languages: `prompts` and `languages`',
    'Environments: `environments`',
    'Loops over a list: `foreach`',
  ]) {
    it(`${title}: the example checks clean and the schema accepts it`, () => {
      const yaml = firstYaml(chapter(title));
      expect(checkFlow(yaml, 'example.yaml').diagnostics).toEqual([]);
      expect(validate(parse(yaml)), JSON.stringify(validate.errors)).toBe(true);
    });
  }
  it('the schema refuses what the checker refuses in these tables (for editors)', () => {
    const bad = (top: Record<string, unknown>) =>
      validate({ version: 2, start: 'a', steps: { a: { hangup: {} } }, ...top });
    expect(bad({ calendars: { office: { timezone: 'UTC', weekly: { 'mon-fir': '09:00-17:00' } } } })).toBe(false);
    expect(bad({ calendars: { office: { timezone: 'UTC', weekly: { mon: '9:00-17:00' } } } })).toBe(false);
    expect(bad({ languages: { english: { voice: 'V' } } })).toBe(false);
    expect(bad({ environments: { staging: { support: ['+44'] } } })).toBe(false);
    expect(
      validate({
        version: 2,
        start: 'a',
        steps: { a: { say: { prompt: 'hi', voice: 'X' }, next: 'b' }, b: { hangup: {} } },
      }),
    ).toBe(false);
    expect(
      validate({
        version: 2,
        start: 'a',
        steps: { a: { calendar: 'office', on: { open: 'b', closed: 'b' } }, b: { hangup: {} } },
      }),
    ).toBe(true);
  });
});
