/**
 * Masking applied to one request of a call (src/engine/call.ts): which of its values are
 * sensitive (the flow's sensitive vars before and after the request, the result a sensitive
 * `save:` takes), and the masked copies of what leaves the process: log entries, the
 * call-ended summary, the exchange given to the recorder (`serve --record`).
 */
import type { RtRequest } from '../protocol/rt.js';
import type { Value } from '../flow/model.js';
import type { CallState, CallSummary } from './types.js';
import { type StepRecord } from './report.js';
import type { Effect, LogEntry } from './outcome.js';
import { MASK, Masker, maskVars, sensitiveValues, stateValues, type Sensitivity } from './mask.js';

/** The request's command_result is the input of a step whose `save:` is sensitive. */
export function resultIsSensitive(s: Sensitivity, prior: Pick<CallState, 's' | 'step'> | undefined): boolean {
  return prior !== undefined && !prior.s.endsWith('@say') && s.steps.has(prior.step);
}

/**
 * The masker of one request: the sensitive vars before and after it (`after`: the vars it left, its callers' frames
 * included), those of the callers' frames waiting before it (a call inside a module), and its result when sensitive.
 */
export function requestMasker(
  s: Sensitivity,
  req: RtRequest,
  prior: CallState | undefined,
  after: readonly (Record<string, unknown> | undefined)[] = [],
  extra: Iterable<string> = [],
): Masker {
  const values = stateValues(prior, s);
  for (const v of after) sensitiveValues(v, s, values);
  if (req.command_result !== '' && resultIsSensitive(s, prior)) values.add(req.command_result);
  for (const v of extra) values.add(v);
  return new Masker(values);
}

export function maskSummary(summary: CallSummary, s: Sensitivity): CallSummary {
  return { ...summary, vars: maskVars(summary.vars, s) as CallSummary['vars'] };
}

export function maskLog(entry: LogEntry, m: Masker): LogEntry {
  return m.scrubValue(entry);
}

/**
 * The exchange as recorded: the sensitive result masked, values scrubbed from other results, params, sms and their
 * outcomes (`s` absent: the flow has no sensitive values, `m` masks its secrets).
 */
export function maskStepRecord(
  rec: StepRecord,
  s: Sensitivity | undefined,
  prior: CallState | undefined,
  m: Masker,
): StepRecord {
  const r = rec.request.command_result;
  // a sensitive input is ***; any other result has the call's sensitive values scrubbed (a PIN typed at another step)
  const result = r !== '' && s && resultIsSensitive(s, prior) ? MASK : m.scrubText(r);
  const req = result === r ? rec.request : { ...rec.request, command_result: result };
  return {
    ...rec,
    request: req,
    ...(rec.vars ? { vars: maskVars(rec.vars, s) as Record<string, Value> } : {}),
    effects: rec.effects.map(({ effect, result }) => ({
      effect: { ...effect, params: m.scrubValue(effect.params) } as Effect,
      result:
        'ok' in result && result.ok && s?.steps.has(effect.step)
          ? { ok: true as const, value: MASK }
          : m.scrubValue(result),
    })),
    reply: { ...rec.reply, params: m.scrubValue(rec.reply.params) },
  };
}
