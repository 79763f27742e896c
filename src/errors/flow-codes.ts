import type { CodeInfo } from './types.js';

/**
 * Codes of the flow checker (src/flow/check*.ts) and of the server config checker
 * (src/config/check.ts). Stable: never rename one; add new ones at the end of their group.
 * `title` says what happened, `hint` what to do; docs/errors.md is written from both.
 */
export const FLOW_CODES: readonly CodeInfo[] = [
  // --- the file as YAML
  {
    code: 'YAML_SYNTAX',
    severity: 'error',
    title: 'The file is not valid YAML, or uses a YAML feature flows do not allow.',
    hint:
      'Fix the YAML at the position shown: indent with spaces (never tabs), close quotes and brackets, keep ' +
      'one document per file, do not use custom tags (!tag) or recursive aliases.',
  },
  {
    code: 'DUPLICATE_KEY',
    severity: 'error',
    title: 'The same key appears twice in one map (or a parameter is given under both its name and its alias).',
    hint: 'Keep one of them. YAML would silently keep only one value; callscript refuses to guess which one you meant.',
  },
  {
    code: 'NOT_A_MAP',
    severity: 'error',
    title: 'The file (or a step) is not a YAML map of keys to values.',
    hint:
      'A flow file is a map with at least `version: 1`, `start:` and `steps:`; each step is a map such as `{ ' +
      'say: "Hello", next: menu }`.',
  },
  {
    code: 'FILE_TOO_LARGE',
    severity: 'error',
    title:
      'The file is larger than the file size limit (2 MiB, 2,097,152 bytes, unless limits.flow_file_bytes in ' +
      'callscript.yaml sets another for flows); it is not parsed.',
    hint:
      'Split the service into several flows, or shorten the file: an anchor and its aliases (&text, *text) ' +
      'repeat a value without copying it.',
  },
  {
    code: 'ALIAS_LIMIT',
    severity: 'error',
    title:
      'The aliases of the file repeat more than 2 MiB of values in all (a "billion laughs" alias bomb, or a ' +
      'very heavy use of aliases); reported once, at the alias that goes past the limit, and nothing after ' +
      'it is checked.',
    hint:
      'Aliases may repeat at most 2 MiB of values in all, aliases inside aliased values counted as expanded. ' +
      'Write the values out, or use fewer, smaller anchors.',
  },
  {
    code: 'TOO_DEEP',
    severity: 'error',
    title:
      'Values are nested more than 64 levels deep (maps and lists inside each other, aliases counted as ' +
      'expanded); reported once, and nothing after it is checked.',
    hint:
      'Flows never need such depth: flatten the value. A file nested thousands of levels deep is refused ' +
      'before it can exhaust the checker.',
  },
  // --- shape of keys and values
  {
    code: 'UNKNOWN_KEY',
    severity: 'error',
    title: 'A key that the language does not define at this place.',
    hint:
      'Check the spelling against docs/flow-language.md (the message suggests the nearest known key). Keys are ' +
      'case-sensitive.',
  },
  {
    code: 'MISSING_KEY',
    severity: 'error',
    title: 'A required key is missing.',
    hint:
      'Add the key named in the message, e.g. `media_id` (or `prompt`) on a read, `targets` on a dialout, ' +
      '`then` with `retry`, `default` on a switch.',
  },
  {
    code: 'MISPLACED_KEY',
    severity: 'error',
    title: 'A key of the language used where it has no meaning (e.g. `on:` on a set step, `next:` after hangup).',
    hint:
      'Move the key where it belongs, or remove it: `on`, `save` and `handlers` belong to command steps, ' +
      '`next` to command and set steps, `default` to switch steps, `then`/`else` to when steps.',
  },
  {
    code: 'TYPE_MISMATCH',
    severity: 'error',
    title: 'A value of the wrong type (a string where an integer is expected, a list where a map is expected...).',
    hint:
      'Write the type the message asks for. Integers and booleans are written without quotes (`max_digits: 4`, ' +
      '`ner: false`); integer and boolean parameters cannot be templates.',
  },
  {
    code: 'OUT_OF_BOUNDS',
    severity: 'error',
    title:
      "A number outside the range allowed for this value (a command parameter, a branch's retry, a setting " +
      'of callscript.yaml), or greater than the value it must not exceed (play_talk_detect min_ms and ' +
      'max_ms).',
    hint: 'Use a value within the bounds given in the message.',
  },
  {
    code: 'BAD_FORMAT',
    severity: 'error',
    title:
      'A string that does not have the format the parameter requires (E.164 number, caller id, PIN, DTMF ' +
      'digits, callid, locale, cdr_field, base64, voice id, URL), or an empty text where one is required (an ' +
      'sms body).',
    hint:
      'Follow the format given in the message; a value computed at run time can be written as a template ("{{ ' +
      'vars.x }}").',
  },
  {
    code: 'BAD_ENUM',
    severity: 'error',
    title: 'A value that is not one of the values allowed for this key.',
    hint: 'Use one of the values listed in the message (they are case-sensitive, e.g. ringtone MUSIC or RING).',
  },
  {
    code: 'BAD_VERSION',
    severity: 'error',
    title: 'The flow declares a language version this callscript does not know.',
    hint: 'Write `version: 1` or `version: 2` (an integer) at the top of the flow.',
  },
  {
    code: 'NEEDS_VERSION_2',
    severity: 'error',
    title: 'A construct of language version 2 in a file that declares version 1.',
    hint:
      'Write `version: 2` at the top of the flow: version 2 keeps every version 1 construct and adds http, ' +
      'subflow, calendars, prompts, environments, sensitive and valid.',
  },
  {
    code: 'BAD_NAME',
    severity: 'error',
    title: 'A flow name, step id or variable name with characters that are not allowed.',
    hint:
      'Flow names and step ids use letters, digits, `-` and `_` (64 characters at most). Variable names start ' +
      'with a letter or `_`, then letters, digits and `_`, and are not CEL reserved words (in, as, if, null, ' +
      'true...). Neither may be a name every JavaScript object has (`__proto__`, `constructor`, `toString`...).',
  },
  // --- values with a meaning
  {
    code: 'BAD_MEDIA',
    severity: 'error',
    title: 'A media value that is none of the accepted forms.',
    hint:
      'A media is an integer library id, 0 for none, "TTS|<voice>|<text>", plain text (spoken in the flow ' +
      'voice), { say: text, voice: id }, or a non-empty list of these (escalating prompts).',
  },
  {
    code: 'BAD_WAV',
    severity: 'error',
    title: 'play_wav_data audio that is not a WAV file the service can play.',
    hint:
      'The service plays PCM WAV, 8000 Hz, 16-bit, mono only. Convert the file, e.g. `sox in.wav -r 8000 -b 16 ' +
      '-c 1 -e signed-integer out.wav`, then base64-encode it.',
  },
  {
    code: 'BAD_TEMPLATE',
    severity: 'error',
    title:
      'A `{{ }}` template that does not parse, uses an unknown filter, or holds more than 1,000 `{{ }}`/`{% ' +
      '%}` tags in one text.',
    hint:
      'Templates use Liquid syntax: `{{ vars.name | default: "caller" }}`. Close every `{{` with `}}` and use ' +
      'only Liquid filters.',
  },
  {
    code: 'BAD_EXPRESSION',
    severity: 'error',
    title: 'A condition or `expr:` value that is not a valid CEL expression.',
    hint:
      'Conditions are CEL: `vars.tries >= 3`, `call.caller.startsWith("+33")`, `has(vars.pin) && vars.pin == ' +
      'result`. Strings use double or single quotes; equality is `==`.',
  },
  {
    code: 'BAD_PATTERN',
    severity: 'error',
    title: 'A result key written as a pattern (`/regex/` or `_1XX`) that does not compile.',
    hint:
      'A regular expression is written between slashes, without flags, and must match the whole result. An ' +
      'Asterisk pattern starts with `_` and uses digits, * # and X (0-9), Z (1-9), N (2-9), [1-5], `.` (one or ' +
      'more) and `!` (zero or more).',
  },
  {
    code: 'UNKNOWN_GROUP',
    severity: 'error',
    title:
      "A pattern's branch saves a group (`save: { service: svc }`) that the pattern does not name " +
      '(`(?<svc>...)`).',
    hint:
      'Name the group in the pattern, `/^\\*(?<svc>[0-9]{2})$/`, or save one of its named groups (the hint ' +
      'suggests the closest). An Asterisk pattern has no groups.',
  },
  {
    code: 'BAD_BRANCH',
    severity: 'error',
    title: 'A branch map that says both or neither of `goto` and `retry`.',
    hint:
      'A branch is a step id, `{ goto: step }`, or `{ retry: n, then: step }`, each optionally with `say:`. ' +
      '`then` goes with `retry` only.',
  },
  {
    code: 'FORBIDDEN_TAG',
    severity: 'error',
    title:
      'A template uses `{% include %}`, `{% render %}` or `{% layout %}`: tags that read files. Templates ' +
      'have no file system.',
    hint:
      'Write the text in the template itself, or keep shared text in a variable (vars:) and print it with {{ ' +
      'vars.name }}.',
  },
  {
    code: 'BAD_FILTER_ARGUMENT',
    severity: 'error',
    title:
      'A spoken-format filter (say_number, say_money, say_date...) given a literal argument it cannot use: a ' +
      'locale or a currency code the server does not know, a style or unit it does not have, a number out of ' +
      'its bounds, or too many arguments.',
    hint:
      "Write a locale as a language tag ('fr-FR', 'en-GB', 'de'), a currency as its ISO 4217 code ('EUR', " +
      "'GBP', 'USD'), and the filter's words as docs/flow-language.md lists them (say_date: 'full', " +
      "say_duration: 'minutes'). Without a locale, a filter speaks the call's language.",
  },
  // --- steps
  {
    code: 'NO_ACTION',
    severity: 'error',
    title: 'A step with no action: no command, `say`, `set`, `switch` or `when`.',
    hint:
      'Give the step exactly one action, e.g. `say: "Hello"`, `read: { prompt: ... }`, `set: { ... }` or ' +
      '`hangup: {}`.',
  },
  {
    code: 'MANY_ACTIONS',
    severity: 'error',
    title: 'A step with more than one action.',
    hint: 'Split it into one step per action and chain them with `next:`.',
  },
  {
    code: 'DUPLICATE_DEFAULT',
    severity: 'error',
    title: 'A step has both `next:` and `on: { default: ... }`, which mean the same thing.',
    hint: 'Keep only one: `next: x` is a shorthand for `on: { default: x }`.',
  },
  // --- results
  {
    code: 'IMPOSSIBLE_RESULT',
    severity: 'error',
    title:
      'A result key that this command can never return (often a misspelt `default`, `error` or result name: ' +
      'the hint then says which one; result names are case-sensitive, `TIMEOUT` not `timeout`).',
    hint:
      "Use a result from the command's result set (e.g. read returns 1..max_digits keys of 0-9 and *, or " +
      'TIMEOUT; play returns 0 or 1); raise max_digits if a key is longer. Commands without a result take only ' +
      '`next`/`default` and `error`; opaque results (record file names, recording hashes) take patterns, ' +
      '`default` or `save`.',
  },
  {
    code: 'UNHANDLED_RESULT',
    severity: 'warning',
    title:
      'Some results of the command lead nowhere (of a queue step: timeout or empty): when one comes, the call is ' +
      'hung up.',
    hint:
      'Handle the results listed in the message under `on:`, or add `default:` (or `next:`) for everything ' +
      'else; a flow-wide `handlers.on` entry also counts.',
  },
  {
    code: 'SHADOWED_HANDLER',
    severity: 'warning',
    title:
      "A step's own pattern matches a result that a flow-wide handler (handlers.on) handles: at this step " +
      'the pattern wins, and the handler never applies.',
    hint:
      "A step's keys and patterns are tried before the flow-wide ones. If the handler should still apply here, " +
      'give the step the exact key too (as the handler does), or narrow the pattern so it does not match it.',
  },
  {
    code: 'UNKNOWN_VARIABLE',
    severity: 'warning',
    title: 'A template or condition reads a variable that nothing sets, or a call field that does not exist.',
    hint:
      'Variables come from top-level `vars:`, `save:` and `set:`; check the spelling. Call fields are ' +
      'call.callid, caller, caller_name, called, app, cdr_field, request_hash, date_started, status and ' +
      'variables.',
  },
  {
    code: 'MEDIA_TEMPLATE_TEXT',
    severity: 'warning',
    title:
      'A media written as one {{ vars.x }} alone (a media computed at run time: a media id or TTS|voice|text) reads ' +
      'a variable the flow gives a text: the command cannot be sent with it.',
    hint:
      "A template alone is sent as rendered, not spoken. To speak the variable's text, write " +
      '{ say: "{{ vars.x }}" } (or text around the template); to play a media, give the variable a media id or ' +
      'TTS|voice|text.',
  },
  {
    code: 'MAYBE_UNSET',
    severity: 'warning',
    title:
      'A `set` expression reads a variable that may not be set when it runs: on some way to the step nothing sets ' +
      'it (a lookup that timed out or failed saves nothing, a branch skips the step that sets it).',
    hint:
      'Reading a missing variable (vars.x, vars.x.y, has(vars.x.y)) makes the expression fail: the set keeps none ' +
      'of its assignments and takes its error way (handlers.error, else the flow ends). Guard it with ' +
      'has(vars.x) ? ... : ..., give it a default in vars:, or set it on every way to the step.',
  },
  {
    code: 'SENSITIVE_RENDERED',
    severity: 'warning',
    title:
      'A sensitive variable (or the sensitive input just saved) is rendered into a media text or an sms ' +
      'body: it leaves the process in clear.',
    hint:
      'The telephony service speaks it or sends it on, and keeps it in its logs. Leave the value out of the ' +
      'text ("the PIN you typed"), or remove the variable from `sensitive:` if it may be shown ' +
      '(docs/flow-language.md, Sensitive values).',
  },
  {
    code: 'SENSITIVE_COPIED',
    severity: 'warning',
    title:
      'A `set:` copies a sensitive variable into one not listed in `sensitive:` (it is masked too: sensitivity ' +
      'follows the value; the flow should say so).',
    hint: 'List the variable it is copied into in `sensitive:` too (docs/flow-language.md, Sensitive values).',
  },
  // --- graph
  {
    code: 'UNKNOWN_STEP',
    severity: 'error',
    title: 'A reference to a step id that the flow does not define.',
    hint: 'Check the spelling (the message suggests the nearest step id) or add the step under `steps:`.',
  },
  {
    code: 'UNREACHABLE_STEP',
    severity: 'error',
    title: 'A step that no path from `start` (or from a handler) can ever reach.',
    hint: 'Link it from another step (`next:`, `on:`, `goto`) or delete it.',
  },
  {
    code: 'NO_PATH_TO_END',
    severity: 'error',
    title: 'A step from which the call can never end: every way out loops back.',
    hint:
      'Give the loop an exit: a `retry: n, then: step` instead of a plain goto to the same step, a `default` ' +
      'leading to a goodbye and `hangup`, or a counter with a `when:` step.',
  },
  {
    code: 'EVENTLESS_LOOP',
    severity: 'error',
    title:
      'A loop made only of logic steps (set, switch, when), which issue no command: it would spin within one ' +
      "request. A queue step's `empty` or `error` way back to it (with no `say:`) is one too: with no agent to " +
      'take the call, the queue answers empty at once.',
    hint: 'Put a command step (say, read, wait...) inside the loop, or make one of the logic steps leave it.',
  },
  {
    code: 'HANDLER_COMMAND',
    severity: 'error',
    title:
      "The hangup handler (or a queue step's `bridged` branch, which stands in for it) is, or leads to, a command " +
      'step; the call is already over when it runs.',
    hint:
      "handlers.hangup (and a queue step's bridged) must name a logic step (set, switch, when) and every step " +
      'reachable from it must be a logic step too.',
  },
  {
    code: 'HANDLER_RESULTS',
    severity: 'error',
    title: 'A flow-wide result handler (`handlers.on`) for a command whose results cannot be matched.',
    hint:
      'handlers.on applies to commands with a known result set (read, play, dialout, conference, ' +
      'wait_for_silence...); hangup, hangup_callid, simple_conference, record and the recording commands have ' +
      'none to match.',
  },
  // --- calendars, prompt tables and languages, environments (version 2)
  {
    code: 'BAD_TIMEZONE',
    severity: 'error',
    title: "A calendar's timezone is not a time zone of the IANA database.",
    hint: 'Write a zone as Area/City, e.g. Europe/London, America/New_York, or UTC (the hint names the nearest zone).',
  },
  {
    code: 'BAD_DAY',
    severity: 'error',
    title: "A key of a calendar's weekly: is not a day (mon ... sun) or a range of days (mon-fri).",
    hint: 'Use mon, tue, wed, thu, fri, sat, sun, or a range such as mon-fri (a range may wrap: fri-mon).',
  },
  {
    code: 'BAD_HOURS',
    severity: 'error',
    title:
      'Opening hours that are not an interval HH:MM-HH:MM of times of day (or an empty one, starting and ' +
      'ending at the same time).',
    hint:
      'Write "08:30-12:30" (24-hour clock, two digits each; 24:00 ends a day). An interval may cross midnight: ' +
      '"22:00-02:00" is open from 22:00 to 02:00 the next day.',
  },
  {
    code: 'OVERLAPPING_HOURS',
    severity: 'warning',
    title:
      'Two intervals of the same day overlap (in one list, or given by two keys such as mon-fri and mon); ' +
      'the calendar is open during either.',
    hint: 'Merge them into one interval, or remove the day from one of the keys.',
  },
  {
    code: 'BAD_DATE',
    severity: 'error',
    title: 'A holiday or exception date that is not a real date YYYY-MM-DD (2026-02-30 does not exist).',
    hint: 'Write the date as YYYY-MM-DD, quoted or not: "2026-12-25".',
  },
  {
    code: 'UNKNOWN_CALENDAR',
    severity: 'error',
    title: 'A calendar step, or open()/holiday() in a condition, names a calendar that calendars: does not define.',
    hint: 'Use the name of a calendar of calendars: (the hint names the nearest), or declare it there.',
  },
  {
    code: 'TOO_MANY_ENTRIES',
    severity: 'error',
    title:
      'A version 2 table is over its bound: calendars (100 per flow, 2,000 dates and 16 intervals a day per ' +
      'calendar), languages (50), prompts (5,000), environments (100, 500 keys each, values of 4,096 ' +
      'characters).',
    hint:
      'Flows are untrusted input, and these tables are read at load and on calls: split the flow, or keep the ' +
      'tables within their bounds.',
  },
  {
    code: 'UNKNOWN_PROMPT',
    severity: 'error',
    title: 'A `{ prompt: name }` media names a prompt that prompts: does not define.',
    hint:
      'Use the name of a prompt of prompts: (the hint names the nearest), or add it there with a text per ' +
      'language.',
  },
  {
    code: 'MISSING_TRANSLATION',
    severity: 'error',
    title: 'A prompt has no text in one of the languages of languages: (a caller in that language would hear nothing).',
    hint: 'Give the prompt an entry for every language of languages:.',
  },
  {
    code: 'UNKNOWN_LANGUAGE',
    severity: 'error',
    title: "A language (language.default, by_country, a prompt's key) that languages: does not declare.",
    hint:
      'Declare the language under languages: with its voice, or use one that is declared (the hint names the ' +
      'nearest).',
  },
  {
    code: 'UNKNOWN_ENV_KEY',
    severity: 'error',
    title:
      'A template or condition reads env.x, and no environment of environments: defines x (or the flow has ' +
      'no environments:).',
    hint: 'Define the key in every environment of environments:, or fix its name (the hint names the nearest).',
  },
  {
    code: 'ENV_KEY_MISSING',
    severity: 'error',
    title: 'An environment lacks a key that another environment defines: every environment defines the same keys.',
    hint: 'Give the environment named a value for each key listed.',
  },
  {
    code: 'UNKNOWN_ENVIRONMENT',
    severity: 'error',
    title:
      'The environment selected (--env, environment: in callscript.yaml or CALLSCRIPT_ENV) is not one of the ' +
      "flow's environments.",
    hint: 'Select one of the environments the flow defines, or add it to its environments:.',
  },
  // --- http lookups (version 2)
  {
    code: 'FORBIDDEN_HEADER',
    severity: 'error',
    title:
      'An http step sets a header the engine sets itself (Host, Content-Length, Transfer-Encoding, Connection...).',
    hint:
      'Remove it: Host comes from the URL, Content-Length and Content-Type from the body; hop-by-hop headers ' +
      "are the connection's business.",
  },
  {
    code: 'UNKNOWN_SECRET',
    severity: 'error',
    title: 'A template reads `secrets.X` for a name that `secrets:` does not declare.',
    hint:
      'Declare it at the top of the flow (`secrets: [X]`) and set the environment variable X where the server ' +
      'runs; check the spelling.',
  },
  {
    code: 'SECRET_OUTSIDE_HTTP',
    severity: 'error',
    title: "`secrets.X` is read somewhere other than an http step's url, headers, query or body.",
    hint:
      'A secret leaves the process only in the lookup that needs it: never in a variable, a prompt, an SMS, a ' +
      'condition or a filler.',
  },
  // --- subflows (version 2): checked across the files of a directory (the link stage)
  {
    code: 'UNKNOWN_MODULE',
    severity: 'error',
    title: 'A subflow step names a module that no file of the directory defines.',
    hint:
      'Name a module of the same directory (its `name:`, or its file name without .yaml); the hint suggests ' +
      'the closest one.',
  },
  {
    code: 'NOT_A_MODULE',
    severity: 'error',
    title: 'A subflow step names a flow that is not a module (it has no `module:` interface).',
    hint:
      'Only modules are entered with subflow: declare `module: { params, results, returns }` in that file (it ' +
      'is then no longer served at /rt on its own), or enter another flow.',
  },
  {
    code: 'MODULE_INVALID',
    severity: 'error',
    title:
      'A subflow step enters a module that has errors of its own (or is in a cycle, or nests too deep): the ' +
      'calling flow is refused too.',
    hint:
      "The message names the module's own errors; fix the module (callscript validate lists them) and the flow " +
      'is admitted with it.',
  },
  {
    code: 'UNKNOWN_PARAM',
    severity: 'error',
    title: 'A subflow step gives a param (in `with:`) that the module does not declare.',
    hint:
      "Use the names under the module's `module.params` (the hint suggests the closest), or declare the param " +
      'there.',
  },
  {
    code: 'MISSING_PARAM',
    severity: 'error',
    title: 'A subflow step leaves out a param the module declares `required`.',
    hint:
      'Give every required param in `with:` (e.g. `with: { account: "{{ vars.account }}" }`), or give it a ' +
      'default in the module (`account: ""`).',
  },
  {
    code: 'UNKNOWN_RESULT',
    severity: 'error',
    title:
      'A result that the module never returns: an `on:` key of a subflow step, or a `return:` of a result ' +
      'not under `module.results`.',
    hint: 'Use the results of `module.results` (the hint suggests the closest), or declare the result there.',
  },
  {
    code: 'UNKNOWN_RETURN',
    severity: 'error',
    title:
      'A returned value that the module does not declare: a `save:` of a subflow step, or a `return:` value ' +
      'not under `module.returns`.',
    hint: 'Use the names of `module.returns` (the hint suggests the closest), or declare the value there.',
  },
  {
    code: 'SUBFLOW_CYCLE',
    severity: 'error',
    title:
      'Modules enter each other in a cycle (a -> b -> a, or a module entering itself): reported once per ' +
      'cycle, with the position of each step of the cycle.',
    hint:
      'A module may not enter itself, directly or through others: the nesting would have no bound. Loop inside ' +
      'one module instead (a step leading back to an earlier one).',
  },
  {
    code: 'SUBFLOW_TOO_DEEP',
    severity: 'error',
    title: 'Subflows nest deeper than 8 levels (a module entering a module entering ...).',
    hint:
      'Flatten the chain: merge small modules, or let the calling flow enter them one after the other instead ' +
      'of one inside the other.',
  },
  {
    code: 'SUBFLOW_TOO_LARGE',
    severity: 'error',
    title: 'A flow and every module it may enter hold more than 20,000 steps in all (each module counted once).',
    hint: 'Split the service into several flows served apart, or make the modules smaller.',
  },
  {
    code: 'SUBFLOW_TOTAL_TOO_LARGE',
    severity: 'error',
    title:
      "The flows of a directory hold more than 100,000 steps of modules in all (a module's steps count once in " +
      'each flow that may enter it): the flow that would go past it is refused.',
    hint:
      "A module's steps are compiled into each flow that may enter it. Let fewer flows enter the big modules " +
      '(route the calls to one flow that enters them), make the modules smaller, or serve some of the flows ' +
      'from another directory (another instance).',
  },
  {
    code: 'RETURN_OUTSIDE_MODULE',
    severity: 'error',
    title: 'A `return:` step in a flow that is not a module.',
    hint:
      'A flow served at /rt ends with hangup; declare `module: { results: [...] }` to make the file a module ' +
      'that other flows enter with subflow:.',
  },
  // --- foreach steps (version 2)
  {
    code: 'LOOP_SHADOWS_VAR',
    severity: 'error',
    title:
      "A foreach's `as:` (or `index:`) names a variable the flow sets otherwise (`vars:`, a module param, " +
      '`save:`, `set:`): each item would overwrite it.',
    hint:
      'Give the item a name of its own (as: appointment), or copy the variable under another name before the ' +
      'loop.',
  },
  {
    code: 'LOOP_VAR_REUSED',
    severity: 'error',
    title:
      "A foreach inside another's body names its item or index like the outer loop's (or a loop's `as:` and " +
      "`index:` are one name): the inner loop would overwrite the outer one's item.",
    hint: 'Give each loop names of its own (as: item in the outer loop, as: entry in the inner one).',
  },
  {
    code: 'LOOP_NEVER_BACK',
    severity: 'error',
    title:
      "A foreach's body never comes back to the loop step (no step reached only through `do:` leads to it), or " +
      '`do:` names the loop itself: the loop would take one item at most.',
    hint:
      'End the body with next: <the foreach step> (the next item); a way to any other step leaves the loop ' +
      'early. The body is the steps reached only through do: a step the rest of the flow reaches too is not in it.',
  },
  // --- the server config file
  {
    code: 'CONFIG_AUTH',
    severity: 'error',
    title:
      'Credentials in callscript.yaml (`auth`, `admin`, `account`) are incomplete: `login` and `password` go ' +
      'together and are not empty.',
    hint:
      "Give both `auth.login` and `auth.password` (the same as the REALTIME10 application's login and " +
      'password), or remove `auth:`; the same for `admin:` and `account:` (the service account; ' +
      'CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD can give it instead).',
  },
  // --- last resort
  {
    code: 'INTERNAL_ERROR',
    severity: 'error',
    title: 'The checker itself failed on this file (a bug in callscript).',
    hint: 'Please report it with the file that triggers it; the flow is refused meanwhile.',
  },
];
