/**
 * Runs one command of a call (not `hangup`, which ends it): its outcome in simulated time (simulate.ts), a dialout
 * to agents played by the agents table (agents/dial.ts) unless the caller script gave that dialout an outcome of
 * its own, `hangup_callid` on the emulator's live calls; then the caller's `hangup_at` cut and, with real time, the
 * wait (which another call's `hangup_callid` cuts short).
 */
import { agentsDecide, dialAgents, type Target } from '../agents/dial.js';
import type { Decision } from '../caller/actor.js';
import type { EmulatorContext } from '../context.js';
import type { CallSpec } from './call.js';
import type { Reply } from './conformance.js';
import { mediaMs } from './media.js';
import { simulate, type CallMedia, type SimResult } from './simulate.js';
import type { EndedBy } from './transcript.js';

export interface RunEnv {
  ctx: EmulatorContext;
  spec: CallSpec;
  media: CallMedia;
  /** The call's simulated time (ms) when the command starts. */
  at: number;
  /** Real time: waits `ms` of call time (less if the call is hung up meanwhile); the call time waited. */
  pause(ms: number): Promise<number>;
  hungUp(): { by: 'hangup_callid' | 'emulator'; reason: string } | undefined;
}

export interface Note {
  code: string;
  message: string;
}

export type Ran =
  | { kind: 'done'; sim: SimResult; notes: Note[] }
  /** The call ended during the command, `ms` into it; `caller` says what happened in words. */
  | { kind: 'interrupted'; ms: number; caller: string; by: EndedBy; reason: string; notes: Note[] };

export async function runCommand(env: RunEnv, reply: Reply, decision: Decision): Promise<Ran> {
  const { ctx, spec } = env;
  const hangupAtS = spec.script.call.hangup_at;
  const hangupAt = hangupAtS === undefined ? Infinity : hangupAtS * 1000;
  const targets = (reply.params.targets as Target[] | undefined) ?? [];
  if (reply.command === 'dialout' && !decision.scripted && agentsDecide(ctx.agents, targets))
    return dialAgents(
      {
        agents: ctx.agents,
        call: { id: spec.id, callid: spec.callid },
        realtime: spec.realtime,
        at: env.at,
        hangupAt,
        ...(hangupAtS !== undefined ? { hangupAtS } : {}),
        pause: env.pause,
        hungUp: env.hungUp,
        whisperMs: mediaMs(reply.params.whisper),
      },
      targets,
    );
  const sim =
    reply.command === 'hangup_callid'
      ? hangupCallid(ctx, spec, reply, decision.outcome.error)
      : simulate(reply.command, reply.params, decision.outcome, env.media);
  if (env.at + sim.durationMs > hangupAt) {
    const ms = Math.max(0, hangupAt - env.at);
    if (spec.realtime) await env.pause(ms);
    return {
      kind: 'interrupted',
      ms,
      caller: `hung up ${hangupAtS} s into the call`,
      by: 'caller',
      reason: `the caller hung up at ${hangupAtS} s (call.hangup_at)`,
      notes: [],
    };
  }
  if (spec.realtime) {
    const waited = await env.pause(sim.durationMs);
    const r = env.hungUp();
    if (r)
      return {
        kind: 'interrupted',
        ms: waited,
        caller: `interrupted after ${waited} ms: ${r.reason}`,
        by: r.by,
        reason: r.reason,
        notes: [],
      };
  }
  return { kind: 'done', sim, notes: sim.warnings.map((message) => ({ code: 'SCRIPT', message })) };
}

function hangupCallid(ctx: EmulatorContext, spec: CallSpec, reply: Reply, error: string | undefined): SimResult {
  if (error !== undefined)
    return { result: '', error, durationMs: 200, caller: `failed with ${error} (as scripted)`, warnings: [] };
  const target = String(reply.params.callid);
  if (target === spec.callid)
    return { result: '', error: '', durationMs: 0, caller: 'the callid is this call: it is hung up', warnings: [] };
  const other = ctx.live.get(target);
  if (other) {
    other.hangUp('hangup_callid', `hangup_callid from call ${spec.callid}`);
    return { result: '', error: '', durationMs: 0, caller: `call ${target} (${other.id}) was hung up`, warnings: [] };
  }
  return { result: '', error: '', durationMs: 0, caller: `no live call ${target}: nothing to hang up`, warnings: [] };
}
