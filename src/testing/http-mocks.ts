/**
 * Mocked HTTP for http steps: the entries of a scenario case's `mocks.http` (and of the
 * routes file of `callscript mock-http`), matched by method and URL, answering a status,
 * a body, headers, after a delay, or failing (`error:` one of LOOKUP_ERRORS, src/engine/http-wait.ts).
 *
 *   mocks:
 *     http:
 *       - { method: GET, url: "https://bank.example/v1/balance?account=12", status: 200, body: { amount: 42 } }
 *       - { url: "https://bank.example/v1/*", status: 404 }             # * matches any run of characters
 *       - { url: "https://bank.example/slow", status: 200, delay_ms: 6000 }
 *       - { url: "https://bank.example/down", error: NETWORK }
 *
 * The first entry that matches answers. URL patterns use `*` only (no regular expressions:
 * matching stays linear in the URL's length).
 */
import type { Value } from '../flow/model.js';
import { LOOKUP_ERRORS, MAX_BODY_DEPTH, type HttpOutcome } from '../engine/http-wait.js';
import type { YNode } from '../flow/yaml.js';

export interface HttpMock {
  method?: string;
  url: string;
  status: number;
  body: Value;
  headers: Record<string, string>;
  delay_ms: number;
  error?: string;
  /** Where it is written (scenario files). */
  line?: number;
}

const KEYS = ['method', 'url', 'status', 'body', 'headers', 'delay_ms', 'error'];

/**
 * How deep a scenario or routes file may nest maps and lists (TOO_DEEP past it): a call's values, a lookup's answer
 * (MAX_BODY_DEPTH) or a variable holding one saved whole (a level more), inside the file's own levels (a recorded
 * answer is under cases, a case, steps, a step and answer; a check of vars under expect and vars too), so that what a
 * recording writes loads back. A flow file keeps its own bound (MAX_DEPTH of src/flow/yaml.ts).
 */
export const TOOL_FILE_DEPTH = MAX_BODY_DEPTH + 16;

/** `*` matches any run of characters, anything else itself; linear (greedy segments in order). */
export function urlMatches(pattern: string, url: string): boolean {
  if (!pattern.includes('*')) return pattern === url;
  const parts = pattern.split('*');
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!url.startsWith(first) || url.length < first.length + last.length || !url.endsWith(last)) return false;
  let at = first.length;
  const end = url.length - last.length;
  for (const p of parts.slice(1, -1)) {
    const i = url.indexOf(p, at);
    if (i < 0 || i + p.length > end) return false;
    at = i + p.length;
  }
  return true;
}

export function findMock(mocks: readonly HttpMock[], method: string, url: string): HttpMock | undefined {
  return mocks.find((m) => (m.method === undefined || m.method === method) && urlMatches(m.url, url));
}

/** What a mock answers, as a lookup's outcome. */
export function mockOutcome(m: HttpMock): HttpOutcome {
  if (m.error !== undefined) return { ok: false, error: m.error, message: `mocked ${m.error}` };
  return { ok: true, status: m.status, body: m.body };
}

/** Parses a list of mocks written in YAML; problems go to `report` (node, message). */
export function parseHttpMocks(n: YNode, report: (at: YNode, msg: string) => void, where = 'mocks.http'): HttpMock[] {
  const out: HttpMock[] = [];
  if (n.kind !== 'seq') {
    report(n, `${where} must be a list of { method, url, status, body, headers, delay_ms, error }`);
    return out;
  }
  for (const item of n.items) {
    if (item.kind !== 'map') {
      report(item, `a ${where} entry is a map { method, url, status, body, ... }`);
      continue;
    }
    const m: HttpMock = { url: '', status: 200, body: null, headers: {}, delay_ms: 0, line: item.pos.line };
    let ok = true;
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
        case 'status':
          if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 100 || scalar > 599) {
            report(v, `${where}: status is an HTTP status, 100 to 599`);
            ok = false;
          } else m.status = scalar;
          break;
        case 'body':
          m.body = plainOf(v);
          break;
        case 'headers':
          if (v.kind !== 'map') {
            report(v, `${where}: headers is a map of strings`);
            ok = false;
          } else for (const h of v.entries) m.headers[h.key] = String(h.value.kind === 'scalar' ? h.value.value : '');
          break;
        case 'delay_ms':
          if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 0 || scalar > 600_000) {
            report(v, `${where}: delay_ms is 0 to 600000`);
            ok = false;
          } else m.delay_ms = scalar;
          break;
        case 'error':
          if (typeof scalar !== 'string' || !(LOOKUP_ERRORS as readonly string[]).includes(scalar)) {
            report(v, `${where}: error is one of ${LOOKUP_ERRORS.join(', ')}`);
            ok = false;
          } else m.error = scalar;
          break;
        default:
          report(e.keyNode, `unknown key "${e.key}" in a ${where} entry (allowed: ${KEYS.join(', ')})`);
          ok = false;
      }
    }
    if (m.url === '' && ok) {
      report(item, `a ${where} entry needs url:`);
      ok = false;
    }
    if (ok) out.push(m);
  }
  return out;
}

const ANSWER_KEYS = ['status', 'body', 'error', 'fillers'];

/** Parses an http step's `answer:` (see HttpAnswer); problems go to `report`. */
export function parseHttpAnswer(n: YNode, report: (at: YNode, msg: string) => void): HttpAnswer | undefined {
  if (n.kind !== 'map') {
    report(n, 'answer is a map { status, body } or { error }, with fillers: n when the filler played n times');
    return undefined;
  }
  const a: HttpAnswer = {};
  let ok = true;
  for (const e of n.entries) {
    const v = e.value;
    const scalar = v.kind === 'scalar' ? v.value : undefined;
    switch (e.key) {
      case 'status':
        if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 100 || scalar > 599) {
          report(v, 'answer.status is an HTTP status, 100 to 599');
          ok = false;
        } else a.status = scalar;
        break;
      case 'body':
        a.body = plainOf(v);
        break;
      case 'error':
        if (typeof scalar !== 'string' || !/^[A-Z][A-Z0-9_]{0,31}$/.test(scalar)) {
          report(v, `answer.error is an error kind in capitals (${LOOKUP_ERRORS.join(', ')}, ...)`);
          ok = false;
        } else a.error = scalar;
        break;
      case 'fillers':
        if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < 0 || scalar > MAX_ANSWER_FILLERS) {
          report(v, `answer.fillers is 0 to ${MAX_ANSWER_FILLERS}: the fillers played before the answer`);
          ok = false;
        } else a.fillers = scalar;
        break;
      default:
        report(e.keyNode, `unknown key "${e.key}" in answer (allowed: ${ANSWER_KEYS.join(', ')})`);
        ok = false;
    }
  }
  if (a.status !== undefined && a.error !== undefined) {
    report(n, 'answer has a status or an error, not both');
    ok = false;
  }
  if (a.error !== undefined && a.body !== undefined) {
    report(n, 'answer: an error has no body');
    ok = false;
  }
  return ok ? a : undefined;
}

function plainOf(n: YNode): Value {
  if (n.kind === 'scalar') return n.value as Value;
  if (n.kind === 'seq') return n.items.map(plainOf);
  const o: Record<string, Value> = {};
  for (const e of n.entries) o[e.key] = plainOf(e.value);
  return o;
}

/**
 * A mock of the routes format (`callscript mock-http`, `simulate --mocks`): a url starting
 * with / matches the request's path and query, any other the full URL; the routes matching
 * the path are tried first.
 */
export function findRoute(routes: readonly HttpMock[], method: string, url: string): HttpMock | undefined {
  let path = url;
  try {
    const u = new URL(url);
    path = u.pathname + u.search;
  } catch {
    // not a URL: matched as written
  }
  return (
    findMock(
      routes.filter((r) => r.url.startsWith('/')),
      method,
      path,
    ) ??
    findMock(
      routes.filter((r) => !r.url.startsWith('/')),
      method,
      url,
    )
  );
}

/**
 * What a scenario step answers the lookup it expects (`answer:` of an http step, written by
 * recordings): a status and body, or an error kind; after `fillers` fillers played (the
 * lookup was still running at that many request deadlines). Neither status nor error: no
 * answer came before the call ended (the lookup runs on at every wait).
 */
export interface HttpAnswer {
  status?: number;
  body?: Value;
  error?: string;
  fillers?: number;
}

/** The most fillers an answer may wait for (a request each: bounded like a call's requests). */
export const MAX_ANSWER_FILLERS = 100;

/** One lookup the tools answer, over one or more requests: its outcome, or pending while its filler plays. */
export interface ToolLookup {
  next(budgetMs: number, filler: boolean): HttpOutcome | 'pending';
  clone(): ToolLookup;
}

/** A lookup answered by a scenario step's `answer:`. */
export class AnsweredLookup implements ToolLookup {
  private left: number;
  constructor(readonly answer: HttpAnswer) {
    this.left = answer.fillers ?? 0;
  }

  next(_budgetMs: number, filler: boolean): HttpOutcome | 'pending' {
    const a = this.answer;
    if (filler && this.left > 0) {
      this.left--;
      return 'pending';
    }
    if (a.error !== undefined) return { ok: false, error: a.error, message: `answered ${a.error}` };
    if (a.status !== undefined) return { ok: true, status: a.status, body: a.body ?? null };
    // no answer came: pending while a filler can play, else the lookup timed out
    if (filler) return 'pending';
    return { ok: false, error: 'TIMEOUT', message: 'the lookup gave no answer' };
  }

  clone(): AnsweredLookup {
    const c = new AnsweredLookup(this.answer);
    c.left = this.left;
    return c;
  }
}

/**
 * A mocked lookup across the requests of a scenario: each request may wait `budgetMs`
 * (the deadline less the engine's margin); a delay longer than that with a filler is
 * `pending` (the filler plays), and the next request waits on.
 */
export class MockedLookup implements ToolLookup {
  private left: number;
  private spent = 0;
  constructor(
    readonly mock: HttpMock | undefined,
    private readonly timeoutMs: number,
    /** What no mock matching answers: NETWORK (scenarios), or 404 (mock-http routes). */
    private readonly unmatched: 'network' | 'not-found' = 'network',
  ) {
    this.left = mock?.delay_ms ?? 0;
  }

  clone(): MockedLookup {
    const c = new MockedLookup(this.mock, this.timeoutMs, this.unmatched);
    c.left = this.left;
    c.spent = this.spent;
    return c;
  }

  /** This request's share: the outcome, or pending. */
  next(budgetMs: number, filler: boolean): HttpOutcome | 'pending' {
    if (!this.mock)
      return this.unmatched === 'network'
        ? { ok: false, error: 'NETWORK', message: 'no mocks.http entry matches this request' }
        : { ok: true, status: 404, body: { error: 'no route matches this request' } };
    const room = filler ? Math.min(budgetMs, this.timeoutMs - this.spent) : Math.min(budgetMs, this.timeoutMs);
    if (this.left <= room) return mockOutcome(this.mock);
    this.spent += room;
    this.left -= room;
    if (!filler || this.spent >= this.timeoutMs)
      return { ok: false, error: 'TIMEOUT', message: 'the mocked lookup outlasts timeout_ms' };
    return 'pending';
  }
}
