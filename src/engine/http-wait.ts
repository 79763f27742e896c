/**
 * Deadline-aware waiting for http lookups, across requests and across instances.
 *
 * - A fresh lookup (the step's state) starts now and may run `timeout_ms` in all. Without a
 *   filler it is bounded by what is left of the request's deadline as well: its result (or
 *   TIMEOUT) is taken at once. With a filler, the request waits for it until the deadline;
 *   if it is not done, the answer is `pending` (the machine plays the filler) and the call
 *   state keeps a LookupRecord (`lk`: its id, step, start, and `until`), while the lookup
 *   goes on in this process.
 * - When the lookup ends, its result is published in the store under `<callid>#http`
 *   (with its id), so that the next request, on any instance, finds it.
 * - The filler's result brings the next request (the `<step>@wait` state): it takes the
 *   result from this process's running lookup, or from the store (polled), waiting again
 *   until its deadline; still not done: `pending` again (the next filler).
 * - Once `timeout_ms` is over the answer is TIMEOUT. An instance that died mid-lookup
 *   never publishes: the record's `until` (start + timeout_ms + 1 s) bounds the wait, then
 *   TIMEOUT. The lookup is not run again elsewhere: by then the author's whole timeout_ms
 *   is spent, and a POST may have reached the other side.
 */
import { randomUUID } from 'node:crypto';
import type { Value } from '../flow/model.js';
import { Masker, secretValues } from './mask.js';
import type { EffectResult, HttpEffect } from './outcome.js';
import { nestedDeeper } from '../protocol/json-depth.js';
import { MAX_BODY_DEPTH } from './size.js';

export { MAX_BODY_DEPTH };

export interface LookupRecord {
  id: string;
  step: string;
  /** Epoch ms it started. */
  started: number;
  /** Epoch ms after which no result will come (its instance died). */
  until: number;
}

/**
 * The error kinds a lookup's answer may be (the lookup client's, src/http/lookup-client.ts): the one list every tool
 * takes them from, so that a kind the server can end a lookup with can be mocked, asked and replayed (a scenario's
 * `mocks.http`, `callscript mock-http`, `simulate`'s `e KIND` and `--mocks`, recordings; schemas/scenario.schema.json
 * and the docs are checked against it). The engine's own kinds are not answers: LIMIT (http.max_lookups_per_call),
 * INVALID_PARAM (a request that cannot be sent), UNAVAILABLE (no lookups configured).
 */
export const LOOKUP_ERRORS = ['TIMEOUT', 'NETWORK', 'REFUSED', 'TOO_LARGE', 'BAD_BODY', 'TOO_DEEP'] as const;
export type LookupError = (typeof LOOKUP_ERRORS)[number];

/** What a lookup came to: a status and parsed body, or an error kind (LOOKUP_ERRORS, or the engine's own). */
export type HttpOutcome = { ok: true; status: number; body: Value } | { ok: false; error: string; message: string };

/** Performs one lookup (with its retries) and resolves by `deadline` (epoch ms) at the latest; never throws. */
export type HttpRunner = (params: Readonly<Record<string, unknown>>, deadline: number) => Promise<HttpOutcome>;

/** Where results are published for other instances: the call store's plain get/set. */
export interface ResultStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

export interface LookupOptions {
  run: HttpRunner;
  /** Reads a secret a flow declares: its values are masked in the outcomes' messages (absent: none masked). */
  secret?: (name: string) => string | undefined;
  store?: ResultStore;
  now?: () => number;
  /**
   * Lookups one call may start: past it, the step's error branch with LIMIT. The plugin gives the config's
   * http.max_lookups_per_call (its default is in the table of options).
   */
  maxPerCall: number;
  /** How often a request polls the store for another instance's result (default 25 ms). */
  pollMs?: number;
}

/** Past `started + timeout_ms`, how long a waiting instance still hopes for a result. */
/** What a lookup came to for this request: its result, the record the call keeps while it runs on, whether it began. */
export interface Performed {
  result: EffectResult;
  lk?: LookupRecord;
  started: boolean;
}

export const LOOKUP_SLACK_MS = 1000;
/**
 * The default of http.max_lookups_per_call, from the table of options, for the tools of src/testing that count a
 * call's lookups as the server does (Lookups itself is given its bound); they may import it from src/config instead.
 */

interface Running {
  id: string;
  promise: Promise<HttpOutcome>;
  done?: HttpOutcome;
}

/** The outcome, or the error TOO_DEEP when its body nests deeper than MAX_BODY_DEPTH. */
export function boundedOutcome(o: HttpOutcome): HttpOutcome {
  if (!o.ok || !nestedDeeper(o.body, MAX_BODY_DEPTH)) return o;
  return {
    ok: false,
    error: 'TOO_DEEP' satisfies LookupError,
    message: `the ${o.status} response's body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`,
  };
}

export function resultKey(callid: string): string {
  return `${callid}#http`;
}

/** An HttpOutcome as the machine takes it: the status as the result, { status, body } to save. */
export function effectResult(o: HttpOutcome): EffectResult {
  return o.ok
    ? { ok: true, value: String(o.status), data: { status: o.status, body: o.body } }
    : { ok: false, error: o.error, message: o.message };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)).unref?.());

export class Lookups {
  private readonly running = new Map<string, Running>();
  private readonly now: () => number;

  constructor(private readonly o: LookupOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Lookups running in this process (tests, health). */
  get size(): number {
    return this.running.size;
  }

  /**
   * The effect's result within `budgetMs`, with the record the call keeps when it is
   * `pending`, and whether a lookup was started (counted per call).
   */
  async perform(e: HttpEffect, lk: LookupRecord | undefined, count: number, budgetMs: number): Promise<Performed> {
    return e.wait ? this.waitFor(e, lk, budgetMs) : this.fresh(e, count, budgetMs);
  }

  /** A lookup of this request: bounded by the deadline without a filler; with one, `pending` at the deadline. */
  private async fresh(e: HttpEffect, count: number, budgetMs: number): Promise<Performed> {
    if (count >= this.o.maxPerCall) {
      const message = `this call has made ${count} lookups, the most http.max_lookups_per_call allows`;
      return { result: { ok: false, error: 'LIMIT', message }, started: false };
    }
    const now = this.now();
    const timeout = Number(e.params.timeout_ms) || 5000;
    if (!e.filler) {
      // no filler: the lookup must end before the reply does
      const o = await this.run(e, now + Math.max(0, Math.min(timeout, budgetMs)));
      return { result: effectResult(o), started: true };
    }
    const rec: LookupRecord = { id: randomUUID(), step: e.step, started: now, until: now + timeout + LOOKUP_SLACK_MS };
    const r = this.start(e, rec, now + timeout);
    const o = await Promise.race([r.promise, sleep(Math.min(budgetMs, timeout))]);
    if (o) return { result: this.take(e.callid, rec.id, o), started: true };
    return { result: { pending: true }, lk: rec, started: true };
  }

  /** The result of a lookup an earlier request began: from this process, or published by another instance. */
  private async waitFor(e: HttpEffect, lk: LookupRecord | undefined, budgetMs: number): Promise<Performed> {
    if (!lk || lk.step !== e.step) {
      const message = 'no lookup of this step is in progress for the call';
      return { result: { ok: false, error: 'TIMEOUT', message }, started: false };
    }
    const now = this.now();
    const local = this.running.get(e.callid);
    if (local && local.id === lk.id) {
      const left = Math.min(budgetMs, lk.until - now);
      const o = local.done ?? (await Promise.race([local.promise, sleep(left)]));
      if (o) return { result: this.take(e.callid, lk.id, o), started: false };
      return this.notYet(lk);
    }
    // another instance runs it (or ran it): its result is published in the store
    const store = this.o.store;
    const end = now + Math.max(0, budgetMs);
    for (;;) {
      const raw = store ? await store.get(resultKey(e.callid)).catch(() => undefined) : undefined;
      const found = raw === undefined ? undefined : parsePublished(raw);
      if (found && found.id === lk.id) return { result: effectResult(found.outcome), started: false };
      const t = this.now();
      if (t >= lk.until) {
        const message = 'the lookup gave no result within timeout_ms (the instance running it may have stopped)';
        return { result: { ok: false, error: 'TIMEOUT', message }, started: false };
      }
      if (t >= end) return this.notYet(lk);
      await sleep(Math.min(this.o.pollMs ?? 25, end - t, lk.until - t));
    }
  }

  private notYet(lk: LookupRecord): Performed {
    if (this.now() >= lk.until - LOOKUP_SLACK_MS)
      return {
        result: { ok: false, error: 'TIMEOUT', message: 'the lookup did not finish within timeout_ms' },
        started: false,
      };
    return { result: { pending: true }, lk, started: false };
  }

  /** The result is taken: this process forgets the lookup. */
  private take(callid: string, id: string, o: HttpOutcome): EffectResult {
    const r = this.running.get(callid);
    if (r && r.id === id) this.running.delete(callid);
    return effectResult(o);
  }

  /**
   * The runner's outcome, with the values of the flow's secrets masked in its message (the URL's host is named in a
   * refusal): what is logged, published in the store, recorded or shown holds none; its answer bounded (before it is
   * published, kept or taken).
   */
  private async run(e: HttpEffect, deadline: number): Promise<HttpOutcome> {
    const o = boundedOutcome(await this.o.run(e.params, deadline));
    if (o.ok || !e.secrets) return o;
    const m = new Masker(secretValues(e.secrets, this.o.secret));
    return m.empty ? o : { ...o, message: m.scrubText(o.message) };
  }

  private start(e: HttpEffect, rec: LookupRecord, deadline: number): Running {
    const callid = e.callid;
    const r: Running = { id: rec.id, promise: Promise.resolve(undefined as unknown as HttpOutcome) };
    r.promise = this.run(e, deadline).then(async (o) => {
      r.done = o;
      // published for whichever instance gets the next request; kept past the record's until
      await this.o.store
        ?.set(resultKey(callid), JSON.stringify({ id: rec.id, outcome: o }), rec.until - this.now() + 60_000)
        .catch(() => undefined);
      return o;
    });
    this.running.set(callid, r);
    // never kept past the record: a call that hung up meanwhile does not leak it
    setTimeout(
      () => {
        if (this.running.get(callid) === r) this.running.delete(callid);
      },
      rec.until - this.now() + 5000,
    ).unref?.();
    return r;
  }
}

function parsePublished(raw: string): { id: string; outcome: HttpOutcome } | undefined {
  try {
    const p = JSON.parse(raw) as { id?: unknown; outcome?: HttpOutcome };
    return typeof p.id === 'string' && p.outcome && typeof p.outcome === 'object'
      ? { id: p.id, outcome: p.outcome }
      : undefined;
  } catch {
    return undefined;
  }
}
