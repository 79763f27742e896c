/**
 * The pages that name server options in their prose give the table's defaults and bounds: docs/http.md (every
 * default it states is an option's, checked), the defaults the other pages state after an option (the errors
 * catalogue's hints among them, in docs/errors.md), and the `serve` part of docs/cli.md. A default is stated right
 * after the option, in the file's name, the plugin's or its variable's: `server.body_limit` (default 64 KiB),
 * `authFailureWindowMs` (default 60000), `LOG_LEVEL` (default `info`); the numbers of the plugin's options in the
 * pages' TypeScript examples are their defaults too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codeDefault } from '../../src/config/code.js';
import { defaultOf, type OptionDef } from '../../src/config/options.js';
import { OPTIONS } from '../../src/config/table.js';

const read = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** An option as the pages name it: its key, its name in code (its default in code units) or its variable. */
interface Named {
  o: OptionDef;
  dflt: unknown;
  /** ms, s or bytes: the unit of a number stated without one. */
  unit: 'ms' | 's' | 'bytes' | undefined;
}

const NAMES = new Map<string, Named>();
const unitOf = (name: string) =>
  /(_ms|Ms)$/.test(name)
    ? 'ms'
    : /_s$/.test(name)
      ? 's'
      : /(body_limit|bodyLimit|bytes|Bytes)$/.test(name)
        ? 'bytes'
        : undefined;
for (const o of OPTIONS) {
  const d = defaultOf(o);
  if (o.key !== undefined && !o.key.includes('*')) NAMES.set(o.key, { o, dflt: d, unit: unitOf(o.key) });
  if (o.env !== undefined) NAMES.set(o.env, { o, dflt: d, unit: unitOf(o.key ?? '') });
  if (o.option !== undefined && !o.option.name.includes('*') && d !== undefined)
    NAMES.set(o.option.name, { o, dflt: codeDefault(o.option.name), unit: unitOf(o.option.name) });
}

const TO = {
  ms: 1,
  s: 1000,
  second: 1000,
  seconds: 1000,
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};
const SIZE = { bytes: 1, KiB: 1024, MiB: 1024 * 1024 };

/** A stated value (`10 s`, `64 KiB`, `4000 ms`, `900`, `` `info` ``) in the unit of the option as named. */
function valueOf(text: string, n: Named): unknown {
  const t = text.trim().replace(/^`(.*)`$/, '$1');
  const m = /^([0-9][0-9,]*|an?)(?: (ms|s|seconds?|minutes?|hours?|days?|bytes|KiB|MiB))?$/.exec(t);
  if (!m || (m[2] === undefined && /^an?$/.test(m[1]!))) return t;
  const v = /^an?$/.test(m[1]!) ? 1 : Number(m[1]!.replace(/,/g, ''));
  const unit = m[2];
  if (unit === undefined) return v;
  if (unit in SIZE) return n.unit === 'bytes' ? v * SIZE[unit as keyof typeof SIZE] : NaN;
  const ms = v * TO[unit as keyof typeof TO];
  return n.unit === 'ms' ? ms : n.unit === 's' ? ms / 1000 : NaN;
}

interface Stated {
  name: string;
  stated: string;
  value: unknown;
  expected: unknown;
  line: number;
}

/**
 * The defaults a page's prose states, each with the option named before it in its paragraph (none: name
 * undefined); and the numbers its TypeScript examples give the plugin's options.
 */
function statedDefaults(page: string): { stated: Stated[]; unnamed: string[] } {
  const stated: Stated[] = [];
  const unnamed: string[] = [];
  const lineAt = (i: number) => page.slice(0, i).split('\n').length;
  // the examples: `deadlineMs: 4000,` (numbers and choices; a boolean is what the example turns on or off)
  const fences = [...page.matchAll(/```ts\n([\s\S]*?)```/g)];
  for (const f of fences)
    for (const m of f[1]!.matchAll(/\b([A-Za-z]+): ([0-9]+|'[a-z]+')/g)) {
      const n = NAMES.get(m[1]!);
      if (n?.dflt === undefined) continue;
      stated.push({
        name: m[1]!,
        stated: m[2]!,
        value: m[2]!.startsWith("'") ? m[2]!.slice(1, -1) : Number(m[2]),
        expected: n.dflt,
        line: lineAt(f.index + m.index),
      });
    }
  // the prose, code blocks left out (their lines blanked, so that positions keep their lines)
  const prose = page.replace(/```[\s\S]*?```/g, (b) => b.replace(/[^\n]/g, ' '));
  const tokens = [
    ...[...prose.matchAll(/`([A-Za-z_.]+)`/g)].map((m) => ({ i: m.index, kind: 'name' as const, text: m[1]! })),
    // a key of the file outside backticks (the hints of the errors catalogue): server.body_depth
    ...[...prose.matchAll(/(?<![`\w.])([a-z]+\.[a-z_]+)(?![`\w])/g)].map((m) => ({
      i: m.index,
      kind: 'name' as const,
      text: m[1]!,
    })),
    ...[...prose.matchAll(/\(default ([^,;:)]+)/g)].map((m) => ({ i: m.index, kind: 'value' as const, text: m[1]! })),
    // an enum's default among its values: `restart` (default: ...)
    ...[...prose.matchAll(/`([a-z]+)` \(default:/g)].map((m) => ({ i: m.index, kind: 'choice' as const, text: m[1]! })),
    // a paragraph, a list item or a table row starts: what was named before is not what follows
    ...[...prose.matchAll(/\n\s*\n|\n- |\n\| /g)].map((m) => ({ i: m.index, kind: 'break' as const, text: '' })),
  ].sort((a, b) => a.i - b.i);
  let named: string | undefined;
  for (const t of tokens) {
    if (t.kind === 'break') named = undefined;
    else if (t.kind === 'name') {
      if (NAMES.has(t.text)) named = t.text;
    } else if (named === undefined) unnamed.push(`line ${lineAt(t.i)}: (default ${t.text}`);
    else {
      const n = NAMES.get(named)!;
      stated.push({
        name: named,
        stated: t.text,
        value: t.kind === 'choice' ? t.text : valueOf(t.text, n),
        expected: n.dflt,
        line: lineAt(t.i),
      });
    }
  }
  return { stated, unnamed };
}

describe('docs/http.md', () => {
  const page = read('http.md');

  it("states the table's defaults, each after its option", () => {
    const { stated, unnamed } = statedDefaults(page);
    expect(unnamed, 'a default stated with no option named before it').toEqual([]);
    for (const s of stated)
      expect(s.value, `docs/http.md:${s.line} ${s.name} (default ${s.stated}`).toEqual(s.expected);
    const names = new Set(stated.map((s) => s.name));
    // the prose's and the examples': the timeouts, the limits, the deadline, the plugin's numbers
    for (const n of [
      'server.ended_call_ttl_s',
      'UNKNOWN_CALL',
      'server.deadline_ms',
      'server.body_depth',
      'server.body_limit',
      'server.headers_timeout_ms',
      'server.request_timeout_ms',
      'server.keep_alive_timeout_ms',
      'server.socket_timeout_ms',
      'server.max_connections',
      'server.auth_failure_limit',
      'server.auth_failure_window_s',
      'LOG_LEVEL',
      'authFailureLimit',
      'authFailureWindowMs',
      'deadlineMs',
      'bodyLimit',
      'bodyDepth',
      'liveCheckMs',
      'headersTimeoutMs',
      'maxConnections',
    ])
      expect(names, n).toContain(n);
  });

  it('a wrong default is found', () => {
    const wrong = page.replace(
      '`server.socket_timeout_ms` (default 30 s)',
      '`server.socket_timeout_ms` (default 20 s)',
    );
    expect(wrong).not.toBe(page);
    const bad = statedDefaults(wrong).stated.filter((s) => s.value !== s.expected);
    expect(bad.map((s) => `${s.name} ${s.stated}`)).toEqual(['server.socket_timeout_ms 20 s']);
    expect(statedDefaults('A cap (default 5 s).\n').unnamed).toEqual(['line 1: (default 5 s']);
  });
});

describe('the other pages of docs/', () => {
  // configuration.md has tests of its own (docs.test.ts); errors.md is the errors catalogue, its hints included
  const pages = readdirSync(new URL('../../docs/', import.meta.url)).filter(
    (f) => f.endsWith('.md') && f !== 'configuration.md' && f !== 'http.md',
  );

  it("state the table's default wherever they state one right after an option", () => {
    const stated = pages.flatMap((f) => statedDefaults(read(f)).stated.map((s) => ({ ...s, page: f })));
    for (const s of stated)
      expect(s.value, `docs/${s.page}:${s.line} ${s.name} (default ${s.stated}`).toEqual(s.expected);
    expect(stated.map((s) => `${s.page} ${s.name}`).sort()).toEqual(
      [
        'admin.md server.reload_settle_ms',
        'admin.md history.ttl_ms',
        'admin.md history.max_path',
        'admin.md history.max_path_bytes',
        'admin.md history.max_bytes',
        'deploy.md server.log_level',
        'errors.md limits.call_state_bytes',
        'errors.md server.ended_call_ttl_s',
        'errors.md server.body_depth',
        'errors.md webhooks.body_limit',
        'errors.md webhooks.tolerance_ms',
        'operations.md LOG_LEVEL',
      ].sort(),
    );
  });
});

describe('docs/cli.md, callscript serve', () => {
  const page = read('cli.md');
  const serve = page.slice(
    page.indexOf('## `callscript serve`'),
    page.indexOf('\n## ', page.indexOf('## `callscript serve`') + 1),
  );

  it("its usage line gives each flag's default, and --workers its bounds", () => {
    const usage = /```\n(callscript serve [\s\S]*?)```/.exec(serve)![1]!;
    let checked = 0;
    for (const m of usage.matchAll(/\[(--[a-z-]+) ([^\]|]+)\]/g)) {
      const o = OPTIONS.find((x) => x.flag === m[1]);
      if (!o || defaultOf(o) === undefined) continue;
      expect(m[2], m[1]).toBe(String(defaultOf(o)));
      checked++;
    }
    expect(checked).toBe(5);
    const workers = OPTIONS.find((o) => o.flag === '--workers')!;
    expect(workers.type === 'integer' && `${workers.min} to ${workers.max}, default ${workers.default}`).toBe(
      /`server.workers`; ([^)]*)\)/.exec(serve)![1],
    );
  });
});
