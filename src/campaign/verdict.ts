/** What a campaign's attempt gave, as a line of the results (./scheduler.ts). */
import type { StateRow } from './journal.js';
import { RETRIED_STATUSES, type CallView, type RowResult } from './types.js';

/** A finished (or given up) call: its result, and why to try again (undefined: do not). */
export function judge(r: StateRow, v: CallView): [RowResult, string | undefined] {
  const callid = v.callid ?? '';
  if (v.status === 'placed')
    return [result(r, 'not_connected', { callid, detail: 'the service never connected the call' }), 'never connected'];
  if (v.status === 'live')
    return [
      result(r, 'timeout', {
        callid,
        lastStep: v.step ?? '',
        detail: 'still in progress at --timeout: no longer followed',
      }),
      undefined,
    ];
  const callStatus = v.callStatus ?? '';
  const res = result(r, v.outcome ?? 'ended', {
    callid,
    callStatus,
    lastStep: v.lastStep ?? '',
    durationMs: v.durationMs ?? null,
  });
  return [res, RETRIED_STATUSES.has(callStatus) ? callStatus : undefined];
}

export function result(r: StateRow, outcome: string, more: Partial<RowResult> = {}): RowResult {
  return {
    number: r.number,
    outcome,
    callStatus: '',
    lastStep: '',
    durationMs: null,
    attempts: r.attempts,
    callid: '',
    line: r.line,
    detail: '',
    ...more,
  };
}
