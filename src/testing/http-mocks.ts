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
 *       - url: "https://bank.example/v1/verify"          # a body and headers the request must hold
 *         match: { body: { account: "12" }, headers: { x-api-key: k } }
 *         answers: [{ error: TIMEOUT }, { status: 200, body: { ok: true } }]   # in turn; then the last again
 *
 * The first entry that matches answers (mock-entries.ts parses them). URL patterns use `*`
 * only (no regular expressions: matching stays linear in the URL's length).
 */
import type { Value } from '../flow/model.js';
import { LOOKUP_ERRORS, MAX_BODY_DEPTH, type HttpOutcome } from '../engine/http-wait.js';
import type { YNode } from '../flow/yaml.js';
import { matches } from './match.js';
import { plainOf } from './mock-entries.js';
import type { Plain } from './scenario.js';

export { parseHttpMocks } from './mock-entries.js';

/** What an entry answers: a status, a body and headers after a delay, or an error. */
export interface MockAnswer {
  status: number;
  body: Value;
  headers: Record<string, string>;
  delay_ms: number;
  error?: string;
}

export interface HttpMock extends MockAnswer {
  method?: string;
  url: string;
  /** What the request must hold besides its method and URL: its JSON body (a subset), headers (names lowercase). */
  match?: { body?: Plain; headers?: Record<string, string> };
  /** Answers in turn: the n-th request the entry answers gets the n-th, past the list the last (else its own). */
  answers?: MockAnswer[];
  /** Where it is written (scenario files). */
  line?: number;
}

/** A request as mocks match it, besides its method and URL: its body (JSON text or parsed) and headers. */
export interface MockRequest {
  body?: unknown;
  headers?: Readonly<Record<string, unknown>>;
}

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

/** The longest request body `match: { body }` parses (larger ones match no body condition). */
const MAX_MATCH_BODY = 1 << 20;

/** A request's body as `match: { body }` compares it: parsed JSON, else the text. */
function bodyOf(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  if (body.length > MAX_MATCH_BODY) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** Whether the request meets an entry's `match:` (none: any request). */
function requestMatches(m: HttpMock, req: MockRequest | undefined): boolean {
  const want = m.match;
  if (!want) return true;
  if (want.headers) {
    const got: Record<string, string> = {};
    for (const [k, v] of Object.entries(req?.headers ?? {}))
      got[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
    for (const [k, v] of Object.entries(want.headers)) if (got[k] !== v) return false;
  }
  return want.body === undefined || matches(want.body, bodyOf(req?.body));
}

export function findMock(
  mocks: readonly HttpMock[],
  method: string,
  url: string,
  req?: MockRequest,
): HttpMock | undefined {
  return mocks.find(
    (m) => (m.method === undefined || m.method === method) && urlMatches(m.url, url) && requestMatches(m, req),
  );
}

/** The answer an entry gives the `n`-th (0-based) request it answers: its answers in turn, then the last. */
export function answerOf(m: HttpMock, n: number): MockAnswer {
  if (!m.answers || m.answers.length === 0) return m;
  return m.answers[Math.min(n, m.answers.length - 1)]!;
}

/** What a mock answers, as a lookup's outcome. */
export function mockOutcome(m: MockAnswer): HttpOutcome {
  if (m.error !== undefined) return { ok: false, error: m.error, message: `mocked ${m.error}` };
  return { ok: true, status: m.status, body: m.body };
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

/**
 * A mock of the routes format (`callscript mock-http`, `simulate --mocks`): a url starting
 * with / matches the request's path and query, any other the full URL; the routes matching
 * the path are tried first.
 */
export function findRoute(
  routes: readonly HttpMock[],
  method: string,
  url: string,
  req?: MockRequest,
): HttpMock | undefined {
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
      req,
    ) ??
    findMock(
      routes.filter((r) => !r.url.startsWith('/')),
      method,
      url,
      req,
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
    readonly mock: MockAnswer | undefined,
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
