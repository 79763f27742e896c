/**
 * The deadline fallback. A step that misses the reply deadline is answered with a short
 * command echoing the request's command_id (`wait`, or the configured media), and its work
 * goes on. The request the fallback replaced is noted with the call (the store's aside, so
 * any instance finds it). When the fallback completes, the service reports it with that
 * command_id; that report is taken as the replaced request again (`substitute`): a retry that
 * gets the reply the late step stored, or, if the step failed, the original result fed anew.
 * So the fallback's own result ("0") is never mistaken for the caller's input. When that report says the call ended
 * (HANGUP, ...), its status is kept: the replaced request is taken as the call's last, and the call ends.
 */
import { isTerminal } from '../protocol/request.js';
import type { RtRequest } from '../protocol/rt.js';
import type { Sealer } from './seal.js';
import { serializeReply } from './serialize.js';

/** The request a deadline fallback replaced, noted with the call (the store's aside). */
interface Replaced extends Pick<
  RtRequest,
  'command' | 'command_id' | 'command_result' | 'command_error' | 'call_status'
> {
  /** The fallback's command (wait, or play for a configured fallback media). */
  fb: string;
  /** 1: command_result is sealed (src/engine/seal.ts). */
  x?: 1;
}

/** How long the fallback `wait` lasts, in seconds. */
export const FALLBACK_WAIT_S = 1;

/** The fallback's command: `wait`, or `play` when a media is configured. */
export function fallbackCommand(media: string | undefined): 'wait' | 'play' {
  return media === undefined ? 'wait' : 'play';
}

/**
 * Whether `req` reads as the report of a fallback whose note the call does not have: the fallback's command, done
 * (no error), numbered as the call's latest command, which is another one. Another instance answered that fallback
 * while its store calls were stalled; its note may reach the store after this request's load (two connections to a
 * store that comes back are not read in any set order). Else the request would be stale: the service, told so, ends
 * the call.
 */
export function unnotedReport(req: RtRequest, latest: { id: number; command: string }, media: string | undefined) {
  const fb = fallbackCommand(media);
  return req.command === fb && req.command_error === '' && req.command_id === latest.id && latest.command !== fb;
}

/** What a late step answers: a short command echoing the request's command_id. */
export function fallbackReply(req: RtRequest, media: string | undefined): string {
  return media === undefined
    ? serializeReply({
        command: 'wait',
        command_id: req.command_id,
        params: { wait: FALLBACK_WAIT_S },
        variablesRaw: req.variablesRaw,
      })
    : serializeReply({
        command: 'play',
        command_id: req.command_id,
        params: { media_id: media },
        variablesRaw: req.variablesRaw,
      });
}

/**
 * The note of the request a fallback replaced, as the aside stores it; its result sealed when a
 * key is configured (it may be a sensitive input, and the aside goes to the store).
 */
export function fallbackNote(r: RtRequest, media: string | undefined, sealer: Sealer | undefined): string {
  const sealed = sealer !== undefined && r.command_result !== '';
  const note: Replaced = {
    fb: fallbackCommand(media),
    command: r.command,
    command_id: r.command_id,
    command_result: sealed ? sealer.seal(r.command_result, r.callid) : r.command_result,
    command_error: r.command_error,
    call_status: r.call_status,
  };
  if (sealed) note.x = 1;
  return JSON.stringify(note);
}

/**
 * The request to step: when the call's last answer was a fallback and this request reports
 * that fallback done (its command, the same command_id, no error), the request the
 * fallback replaced, with this request's variables; else this request.
 */
export function substitute(req: RtRequest, aside: string, sealer: Sealer | undefined): RtRequest {
  let r: Replaced;
  try {
    r = JSON.parse(aside) as Replaced;
  } catch {
    return req;
  }
  if (req.command !== r.fb || req.command_id !== r.command_id || req.command_error !== '') return req;
  let result = r.command_result;
  if (r.x === 1) {
    const opened = sealer?.open(r.command_result, req.callid);
    // not opened (the key changed meanwhile): the fallback's own result goes on instead
    if (opened === undefined) return req;
    result = opened;
  }
  return {
    ...req,
    command: r.command,
    command_id: r.command_id,
    command_result: result,
    command_error: r.command_error,
    // the call ended during the fallback (the caller hung up): the report's status, so that the call ends
    call_status: isTerminal(req.call_status) ? req.call_status : r.call_status,
  };
}
