/**
 * What `paths` tries besides what the flow's machine decides: the values a case may give
 * (results, call fields, vars overrides) that the flow's own text suggests. A switch on
 * `call.caller in vars.priority_callers` needs a caller of that list; a read saved and
 * looked up (`vars.meeting in vars.meetings`) needs a key of that map. The values come
 * from the flow (its vars, the literals of its conditions, samples of `matches()`
 * patterns) and from a few generic alternatives per call field; the machine decides what
 * they do.
 */
import type { CompiledFlow } from '../engine/compile.js';
import type { Value } from '../flow/model.js';
import { CALL_STATUSES, DEFAULT_CALL, type CallFields, type Plain } from './scenario.js';
import { sampleFor } from './sample.js';
import { calendarStarts } from './calendar-starts.js';

/** How a case starts: its call fields and vars overrides (none: the defaults). */
export interface Start {
  call: Partial<CallFields>;
  vars: Record<string, Plain>;
}

/** The switch conditions of a flow (CEL source). */
function conditions(flow: CompiledFlow): string[] {
  const out: string[] = [];
  for (const s of Object.values(flow.model.steps)) if (s.kind === 'switch') for (const c of s.cases) out.push(c.when);
  return out;
}

/** String literals of a CEL source ("..." or '...'), and a sample of each that looks like a pattern. */
function literals(src: string): string[] {
  const out: string[] = [];
  for (const m of src.matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g)) {
    const lit = (m[1] ?? m[2] ?? '').replace(/\\(.)/g, '$1');
    out.push(lit);
    if (/[\^$[\]\\+*?{}()|]/.test(lit)) {
      const s = sampleFor(lit);
      if (s !== undefined) out.push(s);
    }
  }
  return out;
}

/** Every scalar of a value, as text, and every key of its maps. */
function scalars(v: Value, out: string[]): void {
  if (v === null) return;
  if (Array.isArray(v)) for (const x of v) scalars(x as Value, out);
  else if (typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      scalars(x as Value, out);
    }
  } else out.push(String(v));
}

/** The values the flow's text holds: its vars (keys and scalars) and its conditions' literals. */
export function flowValues(flow: CompiledFlow): string[] {
  const out: string[] = [];
  scalars(flow.model.vars as Value, out);
  for (const c of conditions(flow)) out.push(...literals(c));
  return [...new Set(out)].filter((s) => s.length <= 64);
}

const GENERIC: Partial<Record<keyof CallFields, string[]>> = {
  caller: ['+442079460999', '0612345678', ''],
  called: ['+442079460999', '0612345678', ''],
  date_started: ['2026-11-22 03:00:00', '2026-11-22 20:00:00'],
  caller_name: ['', 'Jane Doe'],
  cdr_field: [''],
  request_hash: [],
  // a call never answered (an outbound call): only the hangup handler runs
  status: ['NOANSWER'],
};

/** A phone number as the service gives it (E.164 or national), or none (withheld). */
const NUMBER = /^(\+?[0-9]{4,20})?$/;
const VALID: Partial<Record<keyof CallFields, (s: string) => boolean>> = {
  caller: (s) => NUMBER.test(s),
  called: (s) => NUMBER.test(s),
  callid: (s) => /^[0-9]{1,20}$/.test(s),
  status: (s) => (CALL_STATUSES as readonly string[]).includes(s),
  date_started: (s) =>
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T') + 'Z')),
};

const FIELDS = new Set(Object.keys(DEFAULT_CALL));

/**
 * Other values of a flow var for an override: the other boolean; the conditions' numbers, zero and a large one; their
 * strings and empty.
 */
function otherValues(v: Value, src: string): Plain[] {
  let out: Plain[] = [];
  if (typeof v === 'boolean') out = [!v];
  else if (typeof v === 'number')
    out = [...[...src.matchAll(/(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])/g)].map((m) => Number(m[0])), 0, 1000];
  else if (typeof v === 'string') out = [...literals(src), ''];
  else if (Array.isArray(v)) out = [[]];
  else if (v && typeof v === 'object') out = [{}];
  return [...new Set(out)].filter((x) => JSON.stringify(x) !== JSON.stringify(v));
}

/**
 * The starts to try after the default one: one change each, to a call field or a flow var
 * that a switch condition reads (`call.<field>`, `vars.<name>` of the flow's `vars:`).
 */
export function startVariants(flow: CompiledFlow, values: string[]): Start[] {
  const src = conditions(flow).join('\n');
  const out: Start[] = [];
  const fields = new Set(
    [...src.matchAll(/\bcall\.(\w+)/g)].map((m) => m[1]!).filter((f) => FIELDS.has(f) && f !== 'variables'),
  );
  for (const f of fields) {
    const key = f as keyof CallFields;
    const def = String(DEFAULT_CALL[key] ?? '');
    const valid = VALID[key] ?? (() => true);
    for (const v of new Set([...(GENERIC[key] ?? ['']), ...values]))
      if (v !== def && valid(v)) out.push({ call: { [key]: v }, vars: {} });
  }
  const vars = flow.model.vars;
  const names = new Set([...src.matchAll(/\bvars\.(\w+)/g)].map((m) => m[1]!).filter((n) => n in vars));
  for (const n of names) for (const v of otherValues(vars[n] as Value, src)) out.push({ call: {}, vars: { [n]: v } });
  out.push(...loopStarts(flow, names));
  out.push(...calendarStarts(flow));
  return out;
}

/**
 * For each list of the flow's vars that a foreach reads (`in: vars.list`): the list with no item, with its first item
 * only (the ways through the loop for zero, one and more items), and, when the loop has an `error:` way, a value that
 * is not a list. Names already varied by the switch conditions are left to them.
 */
function loopStarts(flow: CompiledFlow, done: ReadonlySet<string>): Start[] {
  const vars = flow.model.vars;
  const out: Start[] = [];
  const seen = new Set<string>();
  for (const s of Object.values(flow.model.steps)) {
    if (s.kind !== 'loop') continue;
    for (const m of s.in.matchAll(/\bvars\.(\w+)/g)) {
      const n = m[1]!;
      const v = vars[n];
      if (!Array.isArray(v) || seen.has(n)) continue;
      seen.add(n);
      const values: Plain[] = [];
      if (!done.has(n)) values.push([]);
      if (v.length > 1) values.push([v[0] as Plain]);
      if (s.error !== undefined) values.push(null);
      for (const x of values) out.push({ call: {}, vars: { [n]: x } });
    }
  }
  return out;
}
