import type { CallStore } from '../store/types.js';
import type { LoadReport, Registry } from '../registry/registry.js';
import type { Effects } from './effects.js';

export type UnknownCallPolicy = 'restart' | 'hangup' | 'reject';

export interface Routes {
  /** By the request's `app` (the REALTIME10 application hash). */
  apps: Record<string, string>;
  /** By the called `number` (E.164). */
  numbers: Record<string, string>;
  /** When neither matches. */
  default?: string;
}

/** How the real-time endpoint behaves; every field has a default. */
export interface RtOptions {
  /** Answer within this many ms, with a fallback command if the step is late. Default 4000. */
  deadlineMs: number;
  /** Largest request body in bytes. Default 65536. */
  bodyLimit: number;
  /** Forget a call this long after its last request (a lost HANGUP). Default 2 h. */
  callTtlMs: number;
  /** HTTP Basic credentials the service must send (its REALTIME10 app's login/password). */
  auth?: { login: string; password: string };
  /** A non-first request for a call with no state. Default restart. */
  unknownCall: UnknownCallPolicy;
  routes: Routes;
  /**
   * The rt_media played when a step misses the deadline ("Please hold on."); without it,
   * a 1-second `wait`.
   */
  fallback?: string;
}

export const DEFAULT_RT_OPTIONS: RtOptions = {
  deadlineMs: 4000,
  bodyLimit: 65536,
  callTtlMs: 2 * 60 * 60 * 1000,
  unknownCall: 'restart',
  routes: { apps: {}, numbers: {} },
};

/** Options of the Fastify plugin: the flows (a loaded registry or a directory) and the store. */
export interface CallscriptPluginOptions extends Partial<RtOptions> {
  /** A loaded registry; or give `flowsDir`. */
  registry?: Registry;
  /** With `registry`: what loading it found, shown in /health and logged. */
  report?: LoadReport;
  /** Directory of *.yaml flows, loaded at registration. Default `flows`. */
  flowsDir?: string;
  /** Where call snapshots live. Default: in memory. */
  store?: CallStore;
  /** How the flows' effects are performed (sms steps); without `sms`, they fail with UNAVAILABLE. */
  effects?: Effects;
}
