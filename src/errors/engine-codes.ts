import type { CodeInfo } from './types.js';

/**
 * Codes the engine logs (or answers with) while a call runs. They never stop the process:
 * each one is a log entry on the request's Outcome, and the call takes a defined way out
 * (an error branch, a hangup, or a 4xx/409 upstream).
 */
export const ENGINE_CODES: readonly CodeInfo[] = [
  {
    code: 'OUTBOUND_VARS_DROPPED',
    title:
      'An outbound call placed with vars (POST /admin/calls, callscript dial --vars) started without some of ' +
      "them: not declared in the flow's vars:, or not of the declared type",
    hint:
      "Logged (warn) at the call's first request with the names dropped. Declare the variable in the flow's " +
      'vars: with a default of its type (a number default takes "3" as 3, a boolean default takes ' +
      '"true"/"false"); only strings, numbers and booleans are taken.',
  },
  {
    code: 'SENSITIVE_UNREADABLE',
    title: "A call's sealed sensitive values could not be opened with the keys configured",
    hint:
      'The call goes on with `***` for them. It was sealed with a key no longer given: keep the old key in ' +
      'CALLSCRIPT_SENSITIVE_KEY_PREVIOUS until the calls sealed with it have ended (docs/security.md, key ' +
      'rotation).',
  },
  {
    code: 'SENSITIVE_NOT_SEALED',
    title: 'Flows with sensitive values run on the Redis store with no key: their values are stored in clear',
    hint:
      'Logged at startup. Set CALLSCRIPT_SENSITIVE_KEY (32 random bytes: `openssl rand -base64 32`) so that ' +
      'sensitive values are sealed (AES-256-GCM) before they reach Redis (docs/security.md).',
  },
  {
    code: 'SUBFLOW_DEPTH',
    title: 'A call would enter modules deeper than the nesting bound (8)',
    hint:
      'The link stage refuses flows that nest subflows deeper than 8, so only a call state from elsewhere gets ' +
      'here: the call ends.',
  },
  {
    code: 'MODULE_RETURNED',
    title: 'A module run on its own (a scenario of the module) returned: its result ends the run',
    hint:
      'Informational: a module is not served at /rt; a scenario targets it with `with:` params and asserts ' +
      '`return:`.',
  },
  {
    code: 'ITERATION_LIMIT',
    title: 'Too many logic steps ran within one request',
    hint:
      'A loop of set/switch/when steps (or a command step whose params keep failing) did not reach a command ' +
      'within maxLogicSteps (default 100); the call was hung up. Make sure every loop issues a command.',
  },
  {
    code: 'RUNTIME_TEMPLATE',
    title: 'A template failed to render while the call ran',
    hint:
      'Check the template and the variables it reads; use `| default:` for values that may be missing. In a ' +
      "command param it takes the step's error branch; in a `set` the step keeps none of its assignments and " +
      'takes its error way: handlers.error (`error` is RUNTIME_TEMPLATE), else the flow ends.',
  },
  {
    code: 'RUNTIME_PARAM',
    title: 'A command param rendered to an invalid value',
    hint:
      'A templated value (E.164 number, callid, media, bounded integer...) did not pass the format or bounds ' +
      'check once rendered; the step took its error branch as if command_error were INVALID_PARAM.',
  },
  {
    code: 'RUNTIME_MEDIA',
    title: 'A media written as one {{ }} alone rendered text, not a media',
    hint:
      'A media param (a prompt, a say of a command) that is one template and nothing else is a media computed at ' +
      'run time: its value must be a media id or TTS|voice|text. It rendered text, so the command could not be ' +
      'sent: the step took its error branch (INVALID_PARAM), and without one the call ended. To speak the text, ' +
      'write { say: "{{ vars.x }}" } (or text around the template); to play a media, make the variable a media id ' +
      'or TTS|voice|text. validate warns when the variable is known text (MEDIA_TEMPLATE_TEXT).',
  },
  {
    code: 'RUNTIME_CONDITION',
    title: 'A condition failed to evaluate',
    hint:
      'The CEL expression threw (a missing variable, a type error); it counted as false. Guard optional ' +
      'variables with has(vars.x).',
  },
  {
    code: 'RUNTIME_EXPRESSION',
    title: 'A `set` expression failed to evaluate',
    hint:
      'The CEL expression of an `expr:` assignment threw (a missing variable, a type error, a value nested more ' +
      'than 64 levels deep): the step keeps none of its assignments and takes its error way, handlers.error ' +
      '(`error` is RUNTIME_EXPRESSION), else the flow ends. Guard a variable that may be missing with ' +
      'has(vars.x) ? ... : ..., or give it a default in vars: (validate warns: MAYBE_UNSET).',
  },
  {
    code: 'RUNTIME_LOOP',
    title: "A foreach's `in:` failed to evaluate or gave a value that is not a list",
    hint:
      'The loop took its `error:` way, or, without one, went to `next:` as with an empty list. The log says ' +
      'what the value was; guard a list a lookup may not have saved (has(vars.x) in a when step before the ' +
      'loop), or give the loop an error: step.',
  },
  {
    code: 'LOOP_MAX',
    title: "A foreach's list had more items than its `max:`: the loop stopped there",
    hint:
      'The loop went to `next:` after `max:` items (100 when not given, 1000 at most), as if the list were over. ' +
      'Filter the list in `in:` (vars.list.filter(x, ...)), or raise max:.',
  },
  {
    code: 'UNHANDLED_RESULT_AT_RUNTIME',
    title: 'A command result matched no branch and the step has no default',
    hint:
      'The flow ends there and the call is hung up. Add a `default:` (or `next:`) to the step, or a key for ' +
      'this result.',
  },
  {
    code: 'UNHANDLED_ERROR_AT_RUNTIME',
    title: 'A command failed and neither the step nor the flow handles errors',
    hint: "The call is hung up. Add `error:` to the step's `on:` or a flow-wide `handlers.error`.",
  },
  {
    code: 'EFFECT_FAILED',
    title:
      'A step that acts outside the call (sms, http) failed; the step takes its error branch (an http ' +
      'timeout: its timeout branch)',
    hint:
      'The log line gives the error kind (sms: UNAVAILABLE: no SMS account configured; TIMEOUT: no answer ' +
      'before the reply deadline; NETWORK; REJECTED: the API refused it; FAILED. http: TIMEOUT, NETWORK, ' +
      'REFUSED by the SSRF policy, TOO_LARGE, BAD_BODY, TOO_DEEP: a body nested over 64 levels, LIMIT) and its ' +
      'message. Handle it with on: { error: ... } (and on: { timeout: ... } for http) on the step.',
  },
  {
    code: 'STATE_TOO_LARGE',
    title: "A request would have left the call's state (its variables) over the state cap",
    hint:
      "None of that request's changes were kept: the step that issued the command took its error branch with " +
      'the error STATE_TOO_LARGE (else handlers.error, else the call was hung up); a `set` value over the cap ' +
      'is not assigned. Keep variables small (do not append every result to one variable), or raise ' +
      'limits.call_state_bytes (default 32768) in callscript.yaml.',
  },
  {
    code: 'CALL_ENDED',
    title: 'A request came for a call that has already ended; it was answered hangup',
    hint:
      'Ended calls are remembered for server.ended_call_ttl_s (default 600 s) so that a late or repeated ' +
      'request does not restart the flow. Nothing to do unless it happens often: then look for duplicate ' +
      'deliveries.',
  },
  {
    code: 'EVALUATION_LIMIT',
    title:
      "A request's templates and conditions went over their budget (CEL cost units, template memory or " +
      'template time); the step takes its error branch',
    hint:
      "None of that request's changes were kept: the step that issued the command took its error branch with " +
      'the error EVALUATION_LIMIT (else handlers.error, else the call was hung up). The log line names the ' +
      'step and the expression or template. Simplify it (no comprehension inside another over big lists, no ' +
      'loops over big ranges), or raise limits.expression_cost, limits.template_memory or limits.template_ms ' +
      'in callscript.yaml.',
  },
  {
    code: 'FLOW_VERSION_MISMATCH',
    title: 'The call state belongs to another version of the flow',
    hint: 'A live call is pinned to the flow version it started on; the registry must hand the engine that version.',
  },
  {
    code: 'STATE_INVALID',
    title: 'The stored call state names a step the flow does not have',
    hint: 'The state is corrupt or from another flow; the call was hung up and its state dropped.',
  },
  {
    code: 'ENGINE_INTERNAL',
    title: 'The engine failed unexpectedly on a request',
    hint: 'A bug: the call was answered with hangup and its state dropped. Report it with the logged stack.',
  },
];
