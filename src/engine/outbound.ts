/**
 * Outbound calls placed by the server (POST /admin/calls): the service sends each of their
 * requests with `request_hash` set to the id calls.realtime returned. The first request of
 * such a call starts the flow with the variables given when it was placed: only those the
 * flow declares (`vars:`), each made the type of the declared default where it can be
 * (the number 3 for "3" when the default is a number); the others are dropped, and said.
 */
import type { Value } from '../flow/model.js';
import type { RtRequest } from '../protocol/rt.js';
import type { CompiledFlow } from './compile.js';
import type { CallLogger } from './ports.js';

/** Where the vars of outbound calls are kept (src/http/outbound.ts, in the call store). */
export interface OutboundStarts {
  /**
   * The vars given when the call with this id was placed (undefined: not a call the server
   * placed, or forgotten); notes that `callid` is that call, and the status of its first request.
   */
  start(id: string, callid: string, callStatus: string): Promise<Record<string, unknown> | undefined>;
}

export interface StartVars {
  vars: Record<string, Value>;
  /** Given but not taken, with why. */
  dropped: { name: string; why: string }[];
}

/** A flow's language variable (version 2 `language.variable`) and its declared languages. */
export interface LanguageVar {
  variable: string;
  languages: readonly string[];
}

/** The language variable of a flow, if it has one (it may start a call: the call's language). */
export function languageVar(flow: CompiledFlow): LanguageVar | undefined {
  const variable = flow.model.language?.variable;
  return variable === undefined ? undefined : { variable, languages: Object.keys(flow.model.languages ?? {}) };
}

/**
 * The vars a new call starts with, of `given`: the flow's declared vars (their defaults say their types), and its
 * language variable when `language` is given (one of its declared languages: the call is in that language).
 */
export function startVars(
  declared: Readonly<Record<string, Value>>,
  given: Readonly<Record<string, unknown>>,
  language?: LanguageVar,
): StartVars {
  const vars: Record<string, Value> = {};
  const dropped: StartVars['dropped'] = [];
  for (const [name, value] of Object.entries(given)) {
    if (language && name === language.variable && !Object.prototype.hasOwnProperty.call(declared, name)) {
      if (typeof value === 'string' && language.languages.includes(value)) vars[name] = value;
      else
        dropped.push({
          name,
          why: `the flow's language variable takes one of its languages (${language.languages.join(', ')})`,
        });
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(declared, name)) {
      dropped.push({ name, why: "not declared in the flow's vars:" });
      continue;
    }
    const r = asDeclared(declared[name] ?? null, value);
    if (r instanceof Dropped) dropped.push({ name, why: r.why });
    else vars[name] = r;
  }
  return { vars, dropped };
}

class Dropped {
  constructor(readonly why: string) {}
}

function asDeclared(def: Value, v: unknown): Value | Dropped {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
    return new Dropped('not a string, a number or a boolean');
  if (def === null) return v;
  switch (typeof def) {
    case 'string':
      return String(v);
    case 'number': {
      if (typeof v === 'number') return v;
      const n = typeof v === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(v.trim()) ? Number(v) : NaN;
      return Number.isFinite(n) ? n : new Dropped(`declared as a number, got ${JSON.stringify(v).slice(0, 40)}`);
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      return new Dropped(`declared as a boolean, got ${JSON.stringify(v).slice(0, 40)}`);
    default:
      return new Dropped(
        `declared as ${Array.isArray(def) ? 'a list' : 'a map'}: outbound vars are strings, numbers and booleans`,
      );
  }
}

/** The vars an outbound call placed by the server starts with (null: not one, or none given); dropped ones logged. */
export async function outboundVars(
  starts: OutboundStarts,
  req: RtRequest,
  flow: CompiledFlow,
  log: CallLogger,
): Promise<Record<string, Value> | null> {
  const given = await starts.start(req.request_hash!, req.callid, req.call_status);
  if (!given) return null;
  const { vars, dropped } = startVars(flow.tables.initialVars, given, languageVar(flow));
  if (dropped.length > 0) {
    const names = dropped.map((d) => d.name);
    log.warn(
      { callid: req.callid, code: 'OUTBOUND_VARS_DROPPED', id: req.request_hash, flow: flow.name, dropped: names },
      `outbound call ${req.request_hash}: vars ${dropped.map((d) => `${d.name} (${d.why})`).join(', ')} not set`,
    );
  }
  return Object.keys(vars).length > 0 ? vars : null;
}
