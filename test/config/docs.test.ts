/**
 * docs/configuration.md agrees with the table of options: its reference is the one written from the table, and
 * the example file, the tables of settings and the table of environment variables written by hand give the
 * table's defaults, bounds, variables and flags.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/config/check.js';
import { withOptionsReference } from '../../src/config/docs.js';
import type { OptionDef } from '../../src/config/options.js';
import { OPTIONS } from '../../src/config/table.js';

const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
const byKey = new Map(OPTIONS.filter((o) => o.key !== undefined).map((o) => [o.key!, o]));
const option = (key: string): OptionDef => {
  const o = byKey.get(key);
  expect(o, `docs/configuration.md names ${key}, which is not an option`).toBeDefined();
  return o!;
};
const bounds = (o: OptionDef) => (o.type === 'integer' || o.type === 'number' ? `${o.min}..${o.max}` : undefined);
const defaultText = (o: OptionDef) => ('default' in o && o.default !== undefined ? String(o.default) : undefined);

describe('docs/configuration.md', () => {
  it('has the reference written from the table (run: npm run schema)', () => {
    expect(withOptionsReference(page) === page, 'the reference is stale: run npm run schema').toBe(true);
    for (const o of OPTIONS.filter((x) => x.key !== undefined)) expect(page, o.key).toContain(`| \`${o.key}\` |`);
  });

  it("the example file checks clean, and its comments' bounds and values are the table's", () => {
    const m = /```yaml\n(# yaml-language-server[\s\S]*?)```/.exec(page);
    expect(m).not.toBeNull();
    const yaml = m![1]!;
    expect(checkConfig(yaml, 'callscript.yaml').diagnostics).toEqual([]);
    const path: string[] = [];
    let checked = 0;
    for (const line of yaml.split('\n')) {
      const l = /^( *)([a-z_]+):\s*([^#]*?)\s*(?:#\s*(.*))?$/.exec(line);
      if (!l) continue;
      path.length = l[1]!.length / 2;
      path.push(l[2]!);
      const range = /^([0-9]+)\.\.([0-9]+)/.exec(l[4] ?? '');
      if (!range) continue;
      const o = option(path.join('.'));
      expect(`${range[1]}..${range[2]}`, path.join('.')).toBe(bounds(o));
      expect(l[3], `${path.join('.')}: the example gives the default`).toBe(defaultText(o));
      checked++;
    }
    expect(checked).toBeGreaterThan(25);
  });

  it("the tables of settings give the table's defaults and bounds", () => {
    let section = '';
    let checked = 0;
    const begin = page.indexOf('<!-- options:begin');
    const handWritten = page.slice(0, begin) + page.slice(page.indexOf('<!-- options:end'));
    for (const line of handWritten.split('\n')) {
      // `## Call history: \`history\``: the keys of its tables are history's
      const heading = /^##+ .*: `([a-z_]+)`$/.exec(line);
      if (heading) section = heading[1]!;
      else if (line.startsWith('## ')) section = '';
      const row = /^\| `([a-z_.]+)` \| ([^|]*) \| ([^|]*)/.exec(line);
      if (!row) continue;
      const key = row[1]!.includes('.') || byKey.has(row[1]!) ? row[1]! : `${section}.${row[1]}`;
      const o = byKey.get(key);
      if (!o || row[2]!.startsWith('0..')) continue; // not a table of settings
      const given = row[2]!.trim().replace(/`/g, '');
      const d = defaultText(o);
      if (d !== undefined) expect(given, key).toBe(d);
      const range = /^([0-9]+)\.\.([0-9]+)/.exec(row[3]!.trim());
      if (range) expect(`${range[1]}..${range[2]}`, key).toBe(bounds(o));
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('the table of environment variables names each variable of an option, with its key and default', () => {
    const env = page.slice(page.indexOf('## Environment variables'));
    for (const o of OPTIONS.filter((x) => x.env !== undefined)) {
      const row = env.split('\n').find((l) => l.startsWith('| ') && l.split(' | ')[0]!.includes(`\`${o.env}\``));
      expect(row, `${o.env} is missing from the table of environment variables`).toBeDefined();
      const [, overrides = '', dflt = ''] = row!.slice(2, -2).split(' | ');
      expect(overrides, o.env).toContain(o.key);
      const d = defaultText(o);
      if (d !== undefined) expect(dflt.replace(/`/g, ''), o.env).toBe(d);
    }
  });

  it("the flags' example has every flag of serve", () => {
    const flags = page.slice(page.indexOf('## Flags'));
    for (const o of OPTIONS.filter((x) => x.flag !== undefined)) expect(flags, o.flag).toContain(`${o.flag} `);
  });
});
