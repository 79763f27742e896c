/**
 * The entries of a scenario's `mocks.http` and of a `callscript mock-http` routes file, as
 * written in YAML (docs/testing.md "Mocked HTTP"): method and URL, conditions on the
 * request (`match: { body, headers }`), and an answer (status, body, headers, delay_ms or
 * error) or answers in turn (`answers: [...]`). What they answer is in http-mocks.ts.
 */
import { LOOKUP_ERRORS } from '../engine/http-wait.js';
import type { Value } from '../flow/model.js';
import type { YMap, YNode } from '../flow/yaml.js';
import type { HttpMock, MockAnswer } from './http-mocks.js';
import type { Plain } from './scenario.js';
import { suggestKey } from './suggest-key.js';

/** The keys of an entry, of an answer (one of `answers:`), and of `match:`. */
export const ENTRY_KEYS = ['method', 'url', 'match', 'status', 'body', 'headers', 'delay_ms', 'error', 'answers'];
const ANSWER_KEYS = ['status', 'body', 'headers', 'delay_ms', 'error'];
const MATCH_KEYS = ['body', 'headers'];
/** Words an author may write for a key (`response:` for `body:`, `delay:` for `delay_ms:`). */
const ENTRY_SYNONYMS: Record<string, string> = {
  response: 'body',
  delay: 'delay_ms',
  sequence: 'answers',
  responses: 'answers',
  when: 'match',
  request: 'match',
};

/** The most answers one entry gives in turn, and headers one `match:` names. */
export const MAX_ANSWERS = 100;
export const MAX_MATCH_HEADERS = 50;

type Report = (at: YNode, msg: string) => void;

export function plainOf(n: YNode): Value {
  if (n.kind === 'scalar') return n.value as Value;
  if (n.kind === 'seq') return n.items.map(plainOf);
  const o: Record<string, Value> = {};
  for (const e of n.entries) o[e.key] = plainOf(e.value);
  return o;
}

/** Reads one answer key (status, body, headers, delay_ms, error) into `a`; false when its value is wrong. */
function answerKey(key: string, v: YNode, a: MockAnswer, report: Report, where: string): boolean {
  const scalar = v.kind === 'scalar' ? v.value : undefined;
  switch (key) {
    case 'status':
      if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 100 || scalar > 599) {
        report(v, `${where}: status is an HTTP status, 100 to 599`);
        return false;
      }
      a.status = scalar;
      return true;
    case 'body':
      a.body = plainOf(v);
      return true;
    case 'headers':
      if (v.kind !== 'map') {
        report(v, `${where}: headers is a map of strings`);
        return false;
      }
      for (const h of v.entries) a.headers[h.key] = String(h.value.kind === 'scalar' ? h.value.value : '');
      return true;
    case 'delay_ms':
      if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 0 || scalar > 600_000) {
        report(v, `${where}: delay_ms is 0 to 600000`);
        return false;
      }
      a.delay_ms = scalar;
      return true;
    case 'error':
      if (typeof scalar !== 'string' || !(LOOKUP_ERRORS as readonly string[]).includes(scalar)) {
        report(v, `${where}: error is one of ${LOOKUP_ERRORS.join(', ')}`);
        return false;
      }
      a.error = scalar;
      return true;
    default:
      return false;
  }
}

const blank = (): MockAnswer => ({ status: 200, body: null, headers: {}, delay_ms: 0 });

function unknown(report: Report, e: YMap['entries'][number], allowed: readonly string[], what: string): void {
  report(e.keyNode, `unknown key "${e.key}" in ${what}${suggestKey(e.key, allowed, ENTRY_SYNONYMS)}`);
}

/** `answers:` of an entry: answers given in turn. */
function parseAnswers(n: YNode, report: Report, where: string): MockAnswer[] | undefined {
  if (n.kind !== 'seq' || n.items.length === 0 || n.items.length > MAX_ANSWERS) {
    report(n, `${where}: answers is a list of 1 to ${MAX_ANSWERS} answers { status, body, headers, delay_ms, error }`);
    return undefined;
  }
  const out: MockAnswer[] = [];
  let ok = true;
  for (const item of n.items) {
    if (item.kind !== 'map') {
      report(item, `${where}: an answer is a map { status, body, headers, delay_ms, error }`);
      ok = false;
      continue;
    }
    const a = blank();
    for (const e of item.entries) {
      if (!ANSWER_KEYS.includes(e.key)) {
        unknown(report, e, ANSWER_KEYS, `an answer of ${where}`);
        ok = false;
      } else if (!answerKey(e.key, e.value, a, report, where)) ok = false;
    }
    out.push(a);
  }
  return ok ? out : undefined;
}

/** `match:` of an entry: the request's JSON body (a subset) and headers (names in any case, values as written). */
function parseMatch(n: YNode, report: Report, where: string): HttpMock['match'] {
  if (n.kind !== 'map') {
    report(n, `${where}: match is a map { body, headers }: what the request must hold besides its method and url`);
    return undefined;
  }
  const m: NonNullable<HttpMock['match']> = {};
  let ok = true;
  for (const e of n.entries) {
    if (e.key === 'body') m.body = plainOf(e.value) as Plain;
    else if (e.key === 'headers') {
      const v = e.value;
      if (v.kind !== 'map' || v.entries.length > MAX_MATCH_HEADERS) {
        report(v, `${where}: match.headers is a map of at most ${MAX_MATCH_HEADERS} header names to values`);
        ok = false;
        continue;
      }
      m.headers = {};
      for (const h of v.entries) {
        if (h.value.kind !== 'scalar' || h.value.value === null) {
          report(h.value, `${where}: match.headers.${h.key} is the header's value, written as a string`);
          ok = false;
        } else m.headers[h.key.toLowerCase()] = String(h.value.value);
      }
    } else {
      unknown(report, e, MATCH_KEYS, `${where} match`);
      ok = false;
    }
  }
  return ok ? m : undefined;
}

/** Parses a list of mocks written in YAML; problems go to `report` (node, message). */
export function parseHttpMocks(n: YNode, report: Report, where = 'mocks.http'): HttpMock[] {
  const out: HttpMock[] = [];
  if (n.kind !== 'seq') {
    report(n, `${where} must be a list of { method, url, match, status, body, headers, delay_ms, error, answers }`);
    return out;
  }
  for (const item of n.items) {
    if (item.kind !== 'map') {
      report(item, `a ${where} entry is a map { method, url, status, body, ... }`);
      continue;
    }
    const m: HttpMock = { url: '', ...blank(), line: item.pos.line };
    let ok = true;
    const single: YNode[] = [];
    for (const e of item.entries) {
      const v = e.value;
      const scalar = v.kind === 'scalar' ? v.value : undefined;
      switch (e.key) {
        case 'method':
          if (typeof scalar !== 'string' || !['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(scalar)) {
            report(v, `${where}: method is GET, POST, PUT, PATCH or DELETE`);
            ok = false;
          } else m.method = scalar;
          break;
        case 'url':
          if (typeof scalar !== 'string' || scalar === '') {
            report(v, `${where}: url is the URL (or a pattern with *)`);
            ok = false;
          } else m.url = scalar;
          break;
        case 'match': {
          const match = parseMatch(v, report, where);
          if (match) m.match = match;
          else ok = false;
          break;
        }
        case 'answers': {
          const answers = parseAnswers(v, report, where);
          if (answers) m.answers = answers;
          else ok = false;
          break;
        }
        default:
          if (ANSWER_KEYS.includes(e.key)) {
            single.push(e.keyNode);
            if (!answerKey(e.key, v, m, report, where)) ok = false;
          } else {
            unknown(report, e, ENTRY_KEYS, `a ${where} entry`);
            ok = false;
          }
      }
    }
    if (m.answers && single.length > 0) {
      report(
        single[0]!,
        `a ${where} entry with answers: gives each answer's status, body, headers, delay_ms or error there, not ` +
          'beside it',
      );
      ok = false;
    }
    if (m.url === '' && ok) {
      report(item, `a ${where} entry needs url:`);
      ok = false;
    }
    if (ok) out.push(m);
  }
  return out;
}
