import { COMMAND_NAMES } from '../../src/protocol/commands.js';
import { readFileSync, readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { configJsonSchema, configSchemaText } from '../../src/config/schema.js';
import { flowJsonSchema, flowSchemaText } from '../../src/flow/schema.js';

const ajv = () => new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const EXAMPLES = readdirSync('flows')
  .filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'))
  .map((f) => `flows/${f}`);

describe('JSON Schemas', () => {
  it('schemas/flow.schema.json is the generated schema', () => {
    expect(
      readFileSync('schemas/flow.schema.json', 'utf8'),
      'schemas/flow.schema.json is stale: run `npm run schema`',
    ).toBe(flowSchemaText());
  });

  it('schemas/config.schema.json is the generated schema', () => {
    expect(
      readFileSync('schemas/config.schema.json', 'utf8'),
      'schemas/config.schema.json is stale: run `npm run schema`',
    ).toBe(configSchemaText());
  });

  it('compile in ajv strict mode', () => {
    expect(() => ajv().compile(flowJsonSchema())).not.toThrow();
    expect(() => ajv().compile(configJsonSchema())).not.toThrow();
  });

  it('describes every command of the catalogue, with bounds', () => {
    const s = flowJsonSchema() as {
      definitions: Record<string, { anyOf: { properties?: Record<string, { minimum?: number; maximum?: number }> }[] }>;
    };
    const read = s.definitions.command_read!.anyOf.find((f) => f.properties)!;
    expect(read.properties!.max_digits).toMatchObject({ minimum: 1, maximum: 20 });
    // the 16 commands of the reference, and the sms, http and queue effects
    expect(
      Object.keys(s.definitions)
        .filter((k) => k.startsWith('command_'))
        .sort(),
    ).toEqual([...COMMAND_NAMES, 'sms', 'http', 'queue'].map((n) => `command_${n}`).sort());
    expect(s.definitions.command_sms!.anyOf.find((f) => f.properties)).toMatchObject({ required: ['to', 'body'] });
  });

  it('accepts every example flow the checker accepts (never stricter than the checker)', () => {
    expect(EXAMPLES.length).toBeGreaterThan(0);
    const validate = ajv().compile(flowJsonSchema());
    for (const f of EXAMPLES) {
      const text = readFileSync(f, 'utf8');
      expect(checkFlow(text, f).model, f).toBeDefined();
      expect(validate(parse(text)), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('refuses what editors should flag', () => {
    const validate = ajv().compile(flowJsonSchema());
    const ok = { version: 1, start: 'a', steps: { a: { hangup: null } } };
    expect(validate(ok)).toBe(true);
    expect(validate({ ...ok, steps: { a: { read: { promt: 'x' } } } })).toBe(false);
    expect(validate({ ...ok, steps: { a: { read: { prompt: 'x', max_digits: 21 } } } })).toBe(false);
    expect(validate({ ...ok, steps: { a: { say: 'x', wait: 1 } } })).toBe(false);
    expect(validate({ ...ok, steps: { a: { next: 'a' } } })).toBe(false);
    expect(validate({ ...ok, steps: { a: { say: 'x', next: { goto: 'a', retry: 2, then: 'a' } } } })).toBe(false);
    expect(validate({ ...ok, version: 3 })).toBe(false);
    expect(validate({ ...ok, version: 2, sensitive: ['pin', 'pin'] })).toBe(false);
    expect(validate({ ...ok, version: 2, sensitive: ['pin'] })).toBe(true);
    const read = { read: { prompt: 'PIN?' }, next: 'a' };
    expect(validate({ ...ok, version: 2, steps: { a: { ...read, valid: 'result == "1"' } } })).toBe(true);
    expect(
      validate({
        ...ok,
        version: 2,
        steps: { a: { ...read, valid: { when: 'true', else: { retry: 2, then: 'a' } } } },
      }),
    ).toBe(true);
    expect(validate({ ...ok, version: 2, steps: { a: { ...read, valid: { else: 'a' } } } })).toBe(false);
    expect(validate({ ...ok, version: 2, steps: { a: { ...read, valid: { when: 'true', otherwise: 'a' } } } })).toBe(
      false,
    );
  });

  it('covers the http step and secrets: (version 2)', () => {
    const validate = ajv().compile(flowJsonSchema());
    const flow = (http: unknown, top: object = {}) => ({
      version: 2,
      start: 'a',
      ...top,
      steps: {
        a: { http, save: 'r', on: { ok: 'b', '404': 'b', timeout: 'b', error: 'b', default: 'b' } },
        b: { hangup: null },
      },
    });
    const lookup = {
      method: 'POST',
      url: 'https://x.example/{{ vars.a }}',
      headers: { Authorization: 'Bearer {{ secrets.T }}' },
      query: { a: '1' },
      body: { a: ['{{ vars.a }}'] },
      timeout_ms: 8000,
      retries: 2,
      filler: ['One moment.', { wait: 2 }],
    };
    expect(validate(flow(lookup, { secrets: ['T'] })), JSON.stringify(validate.errors)).toBe(true);
    const text =
      `version: 2\nsecrets: [T]\nvars: { a: "1" }\nstart: a\nsteps:\n  a:\n    ` +
      `http: ${JSON.stringify(lookup)}\n    save: r\n    on: { ok: b, "404": b, timeout: b, error: b, default: ` +
      `b }\n  b: { hangup: }\n`;
    expect(checkFlow(text, 'f.yaml').diagnostics).toEqual([]);
    expect(validate(flow({ ...lookup, method: 'post' }))).toBe(false);
    expect(validate(flow({ ...lookup, timeout_ms: 50 }))).toBe(false);
    expect(validate(flow({ ...lookup, ulr: 'x' }))).toBe(false);
    expect(validate(flow({ method: 'GET' }))).toBe(false);
    expect(validate(flow(lookup, { secrets: ['T', 'T'] }))).toBe(false);
  });
});
