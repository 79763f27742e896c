/**
 * Flow resolution, the stage of the call step that finds which compiled flow serves a
 * request: a live call's pinned version (from this process, or fetched from where instances
 * share versions), or, for a new call, the flow its route names (the URL's flow, else by the
 * request's app, by the called number, by the default) at the version its pin and canary
 * give, within the limit of live calls. What it cannot serve is a refusal with its kind.
 */
import { isTerminal } from '../protocol/request.js';
import type { RtRequest } from '../protocol/rt.js';
import { hangupAnswer, type StepAnswer } from './answer.js';
import type { CompiledFlow } from './compile.js';
import type { Maybe } from './maybe.js';
import type { CallLogger, FlowVersions, LiveTracker, Routes } from './ports.js';
import type { CallState } from './types.js';

/** Live calls one process serves at most by default (each holds its state and bookkeeping). */
export const DEFAULT_MAX_LIVE_CALLS = 50_000;

/**
 * Routes as the lookups use them: Maps of the own entries only, so that a request's `app`
 * or `number` ("constructor", "__proto__", "toString") never finds a member of
 * Object.prototype.
 */
interface RouteTables {
  apps: Map<string, string>;
  numbers: Map<string, string>;
  default: string | undefined;
}

function routeTables(r: Routes): RouteTables {
  const table = (o: Record<string, string> | undefined) =>
    new Map(Object.entries(o ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { apps: table(r.apps), numbers: table(r.numbers), default: r.default };
}

/** What resolution found: the flow version that serves the request, or the answer instead. */
export type Resolved =
  | { kind: 'flow'; flow: CompiledFlow; isNew: boolean }
  /** `bury`: the call's version is gone and the call is over: answered once its record is the tombstone. */
  | { kind: 'answer'; answer: StepAnswer; bury?: true };

export class FlowResolver {
  private tables: RouteTables;

  constructor(
    private readonly versions: FlowVersions,
    private readonly live: LiveTracker,
    routes: Routes,
    private readonly maxLiveCalls = DEFAULT_MAX_LIVE_CALLS,
  ) {
    this.tables = routeTables(routes);
  }

  /** New routes (a config reload); live calls are not affected. */
  setRoutes(routes: Routes): void {
    this.tables = routeTables(routes);
  }

  /** The flow a new call gets: the URL's, else by app, by called number, by default; its version by pin and canary. */
  route(req: RtRequest, flowName?: string): { flow?: CompiledFlow; name?: string } {
    const r = this.tables;
    const name = flowName ?? r.apps.get(req.app) ?? r.numbers.get(req.number) ?? r.default;
    return { name, flow: name === undefined ? undefined : this.versions.pick(name, req.callid) };
  }

  /**
   * The flow version of the request: the call's pinned one (`prior`), or a new call's. At once, unless a live call's
   * version is fetched from where instances share them.
   */
  resolve(
    req: RtRequest,
    prior: CallState | undefined,
    flowName: string | undefined,
    log: CallLogger,
  ): Maybe<Resolved> {
    return prior ? this.pinned(req, prior, flowName, log) : this.newCall(req, flowName, log);
  }

  /** A live call's version: this process's, else where instances share them. */
  private pinned(req: RtRequest, prior: CallState, flowName: string | undefined, log: CallLogger): Maybe<Resolved> {
    if (flowName !== undefined && flowName !== prior.flow)
      log.warn(
        { callid: req.callid, flow: prior.flow, url: flowName },
        `request for flow "${flowName}" on a call of flow "${prior.flow}": the call stays on its flow`,
      );
    const flow = this.versions.get(prior.flow, prior.version);
    if (flow || !this.versions.fetch) return this.found(req, prior, flow);
    return this.versions.fetch(prior.flow, prior.version).then((f) => this.found(req, prior, f));
  }

  /** A live call's version, or the answer when it is gone. */
  private found(req: RtRequest, prior: CallState, flow: CompiledFlow | undefined): Resolved {
    if (flow) return { kind: 'flow', flow, isNew: false };
    if (isTerminal(req.call_status)) return { kind: 'answer', answer: hangupAnswer(req), bury: true };
    this.live.error(prior.flow, prior.version);
    const message = `the call runs flow ${prior.flow} version ${prior.version}, which is no longer loaded`;
    return { kind: 'answer', answer: { kind: 'failed', code: 'FLOW_VERSION_GONE', message } };
  }

  /** A new call's flow: routed, and within limits.max_live_calls unless it is a terminal request. */
  private newCall(req: RtRequest, flowName: string | undefined, log: CallLogger): Resolved {
    const terminal = isTerminal(req.call_status);
    const routed = this.route(req, flowName);
    const answer = (a: StepAnswer): Resolved => ({ kind: 'answer', answer: a });
    if (!routed.flow) {
      // a terminal request for a call we never knew: nothing to run, answer hangup
      if (terminal) return answer(hangupAnswer(req));
      if (routed.name !== undefined)
        return answer({ kind: 'not_found', code: 'UNKNOWN_FLOW', message: `no flow named "${routed.name}" is loaded` });
      const message = `no route for app "${req.app}" or number "${req.number}" and no default flow`;
      return answer({ kind: 'not_found', code: 'NO_ROUTE', message });
    }
    const live = this.live.size;
    if (!terminal && live >= this.maxLiveCalls) {
      log.warn(
        { callid: req.callid, code: 'CALL_LIMIT', live },
        'a new call was refused: as many calls are live as limits.max_live_calls allows',
      );
      const message =
        `${live} calls are live here, the most limits.max_live_calls allows: ` +
        'the service may place it on another instance or retry';
      return answer({ kind: 'unavailable', code: 'CALL_LIMIT', message });
    }
    // counted live from now: a reload while this step runs must not release its version
    this.live.set(req.callid, routed.flow.name, routed.flow.version, routed.flow.model.start);
    return { kind: 'flow', flow: routed.flow, isNew: true };
  }
}
