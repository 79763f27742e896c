/**
 * One call, driven as the service drives it: the first request, then for each reply a
 * conformance check, the command run in simulated time (or real time) with the caller's
 * outcome, and the next request with its result; then one terminal request (HANGUP, or
 * the outbound failure status) whose reply is ignored. Everything goes to the transcript.
 */
import { CallerActor } from '../caller/actor.js';
import type { CallerScript } from '../caller/types.js';
import type { EmulatorContext, LiveCall } from '../context.js';
import { checkReply } from './conformance.js';
import { runCommand } from './run-command.js';
import { simulate, type CallMedia } from './simulate.js';
import type { CommandEntry, EndedBy, Transcript } from './transcript.js';
import { postRequest, requestBody, type RequestFields } from './wire.js';

export interface CallSpec {
  id: string;
  direction: 'inbound' | 'outbound';
  url: string;
  authorization?: string;
  /** The app field. */
  app: string;
  requestHash: string | null;
  callid: string;
  cliNumber: string;
  cliName: string;
  number: string;
  dateStarted: string;
  cdrField: string;
  script: CallerScript;
  /** Outbound: seconds the callee's phone rings when it does not answer. */
  ringTimeoutS?: number;
  realtime: boolean;
  replyTimeoutMs: number;
  maxCommands: number;
}

interface Last {
  command: string;
  command_id: string;
  result: string;
  error: string;
}

export function newTranscript(spec: CallSpec): Transcript {
  return {
    id: spec.id,
    callid: spec.callid,
    direction: spec.direction,
    url: spec.url,
    app: spec.app,
    request_hash: spec.requestHash,
    from: spec.cliNumber,
    cli_name: spec.cliName,
    to: spec.number,
    date_started: spec.dateStarted,
    cdr_field: spec.cdrField,
    caller: spec.script.name,
    status: 'running',
    duration_ms: 0,
    requests: 0,
    commands: [],
    violations: [],
    warnings: [],
    unused_actions: [],
    sms: [],
  };
}

export async function runCall(ctx: EmulatorContext, spec: CallSpec): Promise<Transcript> {
  const t = newTranscript(spec);
  ctx.store.putCall(t);
  let remote: { by: 'hangup_callid' | 'emulator'; reason: string } | undefined;
  const abort = new AbortController();
  const aborted = new Promise<void>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  const live: LiveCall = {
    id: spec.id,
    callid: spec.callid,
    answering: 0,
    sms: t.sms,
    hangUp: (by, reason) => {
      remote ??= { by, reason };
      abort.abort();
    },
  };
  const hungUp = () => remote;
  /**
   * Real time: waits `ms` of call time, or less when the call is hung up meanwhile; the call time waited. With
   * --speed N, 1 s of call time lasts 1/N s on the emulator's clock.
   */
  const speed = ctx.calls.speed;
  const pause = async (ms: number): Promise<number> => {
    const t0 = ctx.clock.now();
    await Promise.race([ctx.sleep(ms / speed), aborted]);
    return Math.min(ms, Math.round((ctx.clock.now() - t0) * speed));
  };
  ctx.live.set(spec.callid, live);
  const actor = new CallerActor(spec.script);
  const media: CallMedia = { callid: spec.callid, ids: ctx.store.ids, recordings: new Map() };
  let clock = 0;
  let variables = spec.script.call.variables;

  const fields = (status: string, l: Last): RequestFields => ({
    app: spec.app,
    callid: spec.callid,
    request_hash: spec.requestHash,
    cli_name: spec.cliName,
    cli_number: spec.cliNumber,
    date_started: spec.dateStarted,
    number: spec.number,
    command: l.command,
    command_id: l.command_id,
    command_result: l.result,
    command_error: l.error,
    call_status: status,
    cdr_field: spec.cdrField,
    variables,
  });

  const end = async (status: string, l: Last, by: EndedBy, reason: string) => {
    t.ended_by = by;
    t.end_reason = reason;
    const n = ++t.requests;
    live.answering = n;
    const post = await postRequest(spec.url, requestBody(fields(status, l)), {
      authorization: spec.authorization,
      timeoutMs: spec.replyTimeoutMs,
    }).finally(() => {
      live.answering = 0;
    });
    t.final = {
      request: n,
      call_status: status,
      command: l.command,
      command_id: idValue(l.command_id),
      command_result: l.result,
      command_error: l.error,
    };
    if (post.kind === 'reply') {
      t.final.http_status = post.status;
      t.final.reply_ms = post.ms;
      if (post.status !== 200)
        t.warnings.push({
          request: n,
          code: 'TERMINAL_REPLY',
          field: 'status',
          message:
            `the terminal request got HTTP ${post.status} (ignored, as the service does; callscript answers ` + `200)`,
        });
    } else {
      const why = {
        timeout: `no reply to the terminal request within ${spec.replyTimeoutMs} ms`,
        too_large: 'the reply to the terminal request is too large (not read)',
        network: `the terminal request failed: ${post.kind === 'network' ? post.message : ''}`,
      };
      t.warnings.push({ request: n, code: 'TERMINAL_REPLY', message: why[post.kind] });
    }
  };

  try {
    if (spec.direction === 'outbound' && spec.script.call.answer !== 'ANSWER') {
      clock = (spec.ringTimeoutS ?? 30) * 1000;
      const why = {
        NOANSWER: 'did not answer',
        BUSY: 'was busy',
        CONGESTION: 'could not be reached (congestion)',
        REJECTED: 'rejected the call',
      }[spec.script.call.answer];
      await end(
        spec.script.call.answer,
        { command: '', command_id: '0', result: '', error: '' },
        'not_answered',
        `${spec.number} ${why}`,
      );
      return t;
    }
    let last: Last = { command: '', command_id: '0', result: '', error: '' };
    let status: string = spec.script.call.status;
    for (;;) {
      if (remote) {
        await end('HANGUP', last, remote.by, remote.reason);
        break;
      }
      if (t.commands.length >= spec.maxCommands) {
        t.warnings.push({
          request: t.requests,
          code: 'MAX_COMMANDS',
          message: `the call reached ${spec.maxCommands} commands: the emulator hung up (a loop in the flow?)`,
        });
        await end('HANGUP', last, 'emulator', `${spec.maxCommands} commands (max_commands)`);
        break;
      }
      const n = ++t.requests;
      live.answering = n;
      const post = await postRequest(spec.url, requestBody(fields(status, last)), {
        authorization: spec.authorization,
        timeoutMs: spec.replyTimeoutMs,
      }).finally(() => {
        live.answering = 0;
      });
      const checked = checkReply(post, spec.replyTimeoutMs);
      for (const w of checked.warnings) t.warnings.push({ request: n, ...w });
      const replyMs = post.ms;
      if (!checked.ok) {
        for (const v of checked.violations) t.violations.push({ request: n, ...v });
        if (checked.command !== undefined || checked.shown !== undefined) {
          t.commands.push(
            entry(
              t,
              n,
              checked.command ?? '',
              checked.commandId ?? '',
              checked.shown ?? {},
              [],
              clock,
              replyMs,
              'refused',
              'not run: the reply breaks the protocol',
            ),
          );
        }
        const first = checked.violations[0]!;
        await end('HANGUP', last, 'emulator', `protocol violation: ${first.code} ${first.field}: ${first.message}`);
        break;
      }
      status = 'UP';
      const reply = checked.reply;
      variables = reply.variables;
      const e = entry(t, n, reply.command, reply.commandId, reply.shown, reply.spellings, clock, replyMs, 'done', '');
      t.commands.push(e);
      if (reply.command === 'hangup') {
        e.caller = 'the server hung up';
        await end(
          'HANGUP',
          { command: 'hangup', command_id: reply.commandId, result: '', error: '' },
          'flow',
          'the server answered hangup',
        );
        break;
      }
      const decision = actor.next(reply.command);
      if (decision.hangup) {
        const sim = reply.command === 'record' ? simulate('record', reply.params, {}, media) : undefined;
        e.status = 'interrupted';
        e.result = sim?.result ?? '';
        e.duration_ms = sim?.durationMs ?? 0;
        e.caller = sim ? `${sim.caller}; then hung up (the recording is kept)` : 'hung up';
        clock += e.duration_ms;
        await end(
          'HANGUP',
          { command: reply.command, command_id: reply.commandId, result: e.result, error: '' },
          'caller',
          `the caller hung up during ${reply.command} (${decision.source})`,
        );
        break;
      }
      const ran = await runCommand({ ctx, spec, media, at: clock, pause, hungUp }, reply, decision);
      for (const w of ran.notes) t.warnings.push({ request: n, ...w });
      if (ran.kind === 'interrupted') {
        e.status = 'interrupted';
        e.duration_ms = ran.ms;
        e.caller = ran.caller;
        clock += ran.ms;
        await end(
          'HANGUP',
          { command: reply.command, command_id: reply.commandId, result: '', error: '' },
          ran.by,
          ran.reason,
        );
        break;
      }
      const sim = ran.sim;
      e.result = sim.result;
      e.error = sim.error;
      e.duration_ms = sim.durationMs;
      e.caller = sim.caller;
      clock += sim.durationMs;
      if (sim.bridged) {
        await end(
          'HANGUP',
          { command: 'dialout', command_id: reply.commandId, result: '', error: '' },
          'bridge',
          `the dialout was answered and bridged; the ${sim.bridged} hung up`,
        );
        break;
      }
      if (reply.command === 'hangup_callid' && String(reply.params.callid) === spec.callid && !sim.error) {
        await end(
          'HANGUP',
          { command: 'hangup_callid', command_id: reply.commandId, result: '', error: '' },
          'flow',
          'hangup_callid named this call',
        );
        break;
      }
      actor.completed();
      last = { command: reply.command, command_id: reply.commandId, result: sim.result, error: sim.error };
    }
  } catch (err) {
    ctx.log.error({ err, call: spec.id }, 'emulated call failed');
    t.warnings.push({
      request: t.requests,
      code: 'INTERNAL',
      message: `the emulator failed: ${(err as Error).message}`,
    });
    t.ended_by ??= 'emulator';
    t.end_reason ??= 'internal error of the emulator';
  } finally {
    ctx.live.delete(spec.callid);
    t.status = 'ended';
    t.duration_ms = clock;
    t.unused_actions = actor.unused();
    ctx.store.putCall(t);
  }
  return t;
}

function entry(
  t: Transcript,
  request: number,
  command: string,
  commandId: string,
  params: Record<string, unknown>,
  spellings: string[],
  at: number,
  replyMs: number,
  status: CommandEntry['status'],
  caller: string,
): CommandEntry {
  const e: CommandEntry = {
    n: t.commands.length + 1,
    request,
    command,
    command_id: idValue(commandId),
    params,
    at_ms: at,
    duration_ms: 0,
    reply_ms: replyMs,
    result: '',
    error: '',
    caller,
    status,
  };
  if (spellings.length > 0) e.spellings = spellings;
  return e;
}

function idValue(digits: string): number | string {
  const n = Number(digits);
  return digits !== '' && Number.isSafeInteger(n) ? n : digits;
}
