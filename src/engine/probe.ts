/**
 * Asks the flow's machine, without a call: which transitions does this event take from
 * this state? Tools (paths) use it to find a result that reaches a given branch, so that
 * what they generate is decided by the same machine that serves calls.
 */
import { EV_ERROR, EV_RESULT } from '../flow/machine-config.js';
import type { RtRequest } from '../protocol/rt.js';
import { FRESH, newRun } from './behaviour.js';
import type { CompiledFlow } from './compile.js';

const BLANK: RtRequest = {
  app: '',
  callid: '0',
  request_hash: null,
  cli_name: '',
  cli_number: '',
  date_started: '',
  number: '',
  command: '',
  command_id: 0,
  command_result: '',
  command_error: '',
  call_status: 'UP',
  cdr_field: '',
  variables: {},
  variablesRaw: '{}',
};

/** The coverage keys of the transitions taken when `state` (fresh counters) gets this result or error. */
export function keysTaken(flow: CompiledFlow, state: string, result: string, error = ''): string[] {
  const keys: string[] = [];
  const rt = newRun(BLANK, 1, state, { took: (k) => keys.push(k) });
  try {
    const snap = flow.machine.restore(
      state,
      { vars: flow.tables.initialVars, c: FRESH, res: '', err: '', k: 1, h: 0 },
      rt,
    );
    flow.machine.send(snap, error !== '' ? { type: EV_ERROR, result, error } : { type: EV_RESULT, result });
  } catch {
    // a state the machine cannot restore takes nothing
  }
  return keys;
}
