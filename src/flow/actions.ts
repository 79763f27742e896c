/**
 * What a flow step can do: the 16 call commands of the reference (src/protocol/commands.ts)
 * and the flow's own *effects*, steps that act outside the call (send an SMS) without
 * issuing a call command. Effects are described like commands (params with types, bounds
 * and formats; a result set), so the checker and the engine treat both alike, except that
 * an effect never goes to the telephony service: the engine suspends, the server performs
 * it, and the flow goes on with its outcome.
 */
import { COMMANDS, isCommandName, type CommandName, type CommandSpec } from '../protocol/commands.js';

export const EFFECT_NAMES = ['sms', 'http', 'queue'] as const;
export type EffectName = (typeof EFFECT_NAMES)[number];
export type ActionName = CommandName | EffectName;

export interface ActionSpec extends Omit<CommandSpec, 'name'> {
  name: ActionName;
}

export const EFFECTS: Record<EffectName, ActionSpec> = {
  sms: {
    name: 'sms',
    doc:
      'Sends an SMS through the SMS REST API (no call command). The result is the new SMS hash; a failure ' +
      'takes the error branch.',
    params: {
      to: { type: 'string', format: 'phone_number', doc: 'Recipient, E.164; often "{{ call.caller }}".' },
      body: {
        type: 'string',
        doc:
          'The text (templated). Encoding and parts follow GSM 03.38 / UCS-2; %STOPNUM% is replaced with a ' +
          'custom sender.',
      },
      from: {
        type: 'string',
        format: 'sms_sender',
        doc: 'Sender: 1 to 11 of a-z A-Z 0-9 space - _ with a letter; empty or absent: a shared short code.',
      },
      force_encoding: {
        type: 'string',
        enum: ['GSM', 'UNICODE'],
        doc: 'Force the encoding (GSM transliterates what it lacks).',
      },
      nature: { type: 'string', enum: ['ALERTING', 'MARKETING'], doc: 'The nature of the message.' },
      user_data: {
        type: 'string',
        format: 'sms_user_data',
        doc: 'Free text kept with the SMS (32 characters at most).',
      },
      flash_message: { type: 'bool', doc: 'Display the message immediately (class 0).' },
      webhook: { type: 'string', format: 'url', doc: 'URL notified of status changes (options.webhook.endpoint).' },
    },
    results: { kind: 'any', doc: 'the SMS hash' },
  },
  // Version 2: checked by src/flow/check-http.ts (maps and a JSON body are not catalogue params); described here for
  // the schema and docs.
  http: {
    name: 'http',
    doc:
      'Version 2: an HTTP lookup (no call command). Branches on ok (2xx), exact status codes, timeout, error ' +
      'and default; save: keeps { status, body }.',
    params: {
      method: {
        type: 'string',
        enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        default: 'GET',
        doc: 'The HTTP method.',
      },
      url: { type: 'string', format: 'url', doc: 'The URL, http:// or https:// (templated; secrets.X allowed).' },
      timeout_ms: {
        type: 'int',
        min: 100,
        max: 30000,
        default: 5000,
        doc: "The lookup's whole time, retries and fillers included.",
      },
      retries: {
        type: 'int',
        min: 0,
        max: 5,
        default: 0,
        doc: 'Retries on network errors, timeouts and 5xx, with backoff, within timeout_ms.',
      },
    },
    results: { kind: 'any', doc: 'the HTTP status code' },
  },
  // Version 2: checked by src/flow/check-queue.ts (lists, media and a nested announce are not catalogue params);
  // described here for the schema, completion and docs.
  queue: {
    name: 'queue',
    doc:
      'Version 2: waits in a line for the next free agent (hold media, announcements), rings them, and branches ' +
      'on bridged (the call with the agent ended), timeout (max_wait), empty (no agent can take the call), error.',
    params: {
      name: { type: 'string', doc: "The queue's name: letters, digits, - and _ (64 at most)." },
      strategy: {
        type: 'string',
        enum: ['in_order', 'round_robin', 'longest_idle'],
        default: 'in_order',
        doc: 'Which free agent rings: the first listed, the next after the last rung, or the one free longest.',
      },
      ring_time: { type: 'int', min: 5, max: 300, default: 20, doc: 'Seconds an agent rings before NOANSWER.' },
      wrap_up: { type: 'int', min: 0, max: 3600, default: 0, doc: 'Seconds an agent stays busy after a call.' },
      max_wait: {
        type: 'int',
        min: 10,
        max: 86400,
        default: 900,
        doc: 'Seconds in the line before the timeout branch.',
      },
      handle_time: {
        type: 'int',
        min: 10,
        max: 7200,
        default: 180,
        doc: 'Seconds a call takes, for the expected wait until the queue has served calls of its own.',
      },
      max_talk: {
        type: 'int',
        min: 60,
        max: 86400,
        default: 7200,
        doc: 'Seconds after which an agent whose call was never seen to end (an instance lost) is free again.',
      },
      cli: { type: 'string', format: 'cli_phone_number', doc: 'Caller id shown to the agent (E.164 or BLOCKED).' },
    },
    results: { kind: 'any', doc: 'bridged, timeout, empty' },
  },
};

export const ACTION_SPECS: Record<ActionName, ActionSpec> = { ...COMMANDS, ...EFFECTS };

export function isEffect(name: string): name is EffectName {
  return (EFFECT_NAMES as readonly string[]).includes(name);
}

export function isAction(name: string): name is ActionName {
  return isCommandName(name) || isEffect(name);
}
