/**
 * The flow model: what the checker produces from a YAML flow once it has no errors, and
 * what the compiler turns into an xstate machine and a runtime program. Every shorthand
 * of the language is expanded here (say:, scalar params, aliases, next:, when/then/else,
 * string targets), so later stages see one canonical form.
 */
import type { ActionName } from './actions.js';
import type { Calendar } from './calendar.js';

export interface Pos {
  file: string;
  line: number; // 1-based
  column: number; // 1-based
}

/** Plain data as written in YAML. Strings may hold `{{ }}` templates (liquid). */
export type Value = null | boolean | number | string | Value[] | { [k: string]: Value };

/** One media choice. `tts.text` and `raw` may hold templates. */
export type MediaSpec =
  | { kind: 'none' } // written 0: no media
  | { kind: 'id'; id: number } // a library media id
  | { kind: 'tts'; voice: string; text: string } // TTS|voice|text
  | { kind: 'raw'; value: string } // a template that renders to a rt_media string
  | { kind: 'prompt'; name: string }; // an entry of the prompt table, in the call's language (version 2)

/**
 * A media parameter: the n-th visit of the step (retries included) plays the n-th entry,
 * the last one once the list is exhausted (escalating prompts).
 */
export type MediaParam = MediaSpec[];

export interface CommandCall {
  /** A call command, or an effect (`sms`) that the engine performs outside the call. */
  name: ActionName;
  /** Non-media params by their reference names; strings may be templates. */
  params: Record<string, Value>;
  /** Media params by their reference names. */
  media: Record<string, MediaParam>;
}

/** Where a result leads. */
export interface Branch {
  /** Step to go to. Absent with `retry` until the retries are used up (then `then`). */
  goto?: string;
  /** Re-run this same step at most `retry` times for this result key, then go to `then`. */
  retry?: number;
  then?: string;
  /** Played (as a `play` command) before going on: "Sorry, that is not a choice." */
  say?: MediaParam;
  /** A pattern's branch (version 2): variable <- named group of the pattern, saved when the branch is taken. */
  save?: Record<string, string>;
  pos: Pos;
}

export interface ResultPattern {
  /** As written: `/regex/` or an Asterisk-style `_1XX.` pattern. */
  source: string;
  /** The equivalent anchored regular expression source. */
  regex: string;
  branch: Branch;
}

export interface Branches {
  exact: Record<string, Branch>;
  patterns: ResultPattern[];
  /** No other key matched (also written `next:`). */
  default?: Branch;
  /** The command failed (`command_error` set). */
  error?: Branch;
}

export interface Assignment {
  name: string;
  /** A literal (strings templated), or a CEL expression. */
  value: { kind: 'literal'; value: Value } | { kind: 'expr'; expr: string };
  pos: Pos;
}

/**
 * `valid:` of a command step (version 2): a condition every input must meet. A result no
 * exact key takes (a read's TIMEOUT aside) is checked before patterns and default; when
 * the condition is false the result is rejected: it is not saved and goes to `else` (its
 * own retry counter), or without `else` to the step's default (sharing its counter).
 */
export interface Valid {
  /** CEL over vars, call, and `result`: the input being checked. */
  when: string;
  else?: Branch;
  pos: Pos;
}

export interface SwitchCase {
  /** CEL expression over vars, call, result, error. */
  when: string;
  goto: string;
  pos: Pos;
}

export type Step =
  | {
      kind: 'command';
      id: string;
      pos: Pos;
      command: CommandCall;
      /** Store the result (string) in vars[save]. */
      save?: string;
      on: Branches;
      /** false: flow-wide result handlers (handlers.on) do not apply to this step. */
      inheritHandlers: boolean;
      valid?: Valid;
      /** An http step's request and filler (version 2, src/flow/check-http.ts). */
      http?: HttpSpec;
      /** A queue step's line, agents and media (version 2, src/flow/check-queue.ts). */
      queue?: QueueSpec;
    }
  | { kind: 'set'; id: string; pos: Pos; assign: Assignment[]; next?: string }
  | {
      kind: 'switch';
      id: string;
      pos: Pos;
      cases: SwitchCase[];
      default?: string;
      /**
       * A calendar step (version 2): the calendar's name, and the result each case and the default stand for (open,
       * holiday; closed).
       */
      calendar?: { name: string; labels: string[]; otherwise: string };
    }
  | SubflowStep
  | ReturnStep
  | LoopStep;

/**
 * `foreach:` (version 2): runs its body (`do:`, the steps only reached through it) once per item of a list, the
 * item in `vars.<as>` and its index in `vars.<index>`; the body comes back to the loop step for the next item.
 */
export interface LoopStep {
  kind: 'loop';
  id: string;
  pos: Pos;
  /** CEL giving the list, evaluated when the loop starts and again before each next item. */
  in: string;
  inPos: Pos;
  /** The variable holding the current item. */
  as: string;
  asPos: Pos;
  /** The variable holding the current item's index (0 for the first). */
  index?: string;
  indexPos?: Pos;
  /** The most items one run of the loop takes (DEFAULT_LOOP_MAX; at most MAX_LOOP_MAX). */
  max: number;
  /** The first step of the body. */
  do: string;
  doPos: Pos;
  /** Where to go once the list is over (absent: the flow ends), and where it is written (absent: the step's pos). */
  next?: string;
  nextPos?: Pos;
  /** Where a value that is not a list goes (absent: as an empty list, to `next`), and where it is written. */
  error?: string;
  errorPos?: Pos;
}

/** The default and the bound of a loop's `max:`. */
export const DEFAULT_LOOP_MAX = 100;
export const MAX_LOOP_MAX = 1000;

/** `subflow:` (version 2): runs a module flow with params, then branches on the result it returns. */
export interface SubflowStep {
  kind: 'subflow';
  id: string;
  pos: Pos;
  /** The module's flow name, and where it is written. */
  flow: string;
  flowPos: Pos;
  /** Params by name (strings templated, read in the caller's scope), and where each is written. */
  with: Record<string, Value>;
  withPos: Record<string, Pos>;
  /** Where `with:` is written (absent: none). */
  withAt?: Pos;
  /** Caller variable <- returned value name. */
  save: Record<string, string>;
  savePos: Record<string, Pos>;
  /** Result -> step. */
  on: Record<string, string>;
  onPos: Record<string, Pos>;
  /** Any other result (`next:` or `on: { default }`). */
  default?: string;
  /** Set by the link stage: the namespace prefix of the module's states (`pin-check:`). */
  target?: string;
}

/** `return:` (version 2, modules only): ends the module with a result and values. */
export interface ReturnStep {
  kind: 'return';
  id: string;
  pos: Pos;
  result: string;
  resultPos: Pos;
  values: Record<string, Value>;
  valuesPos: Record<string, Pos>;
}

/** A module's interface (`module:` at the top of a flow file, version 2). */
export interface ModuleSpec {
  /** Param name -> its default value, or `required`. */
  params: Record<string, { required: true } | { required: false; value: Value }>;
  results: string[];
  returns: string[];
  pos: Pos;
}

export interface Handlers {
  /** Logic steps run when the call ends (terminal call_status). No call commands there. */
  hangup?: string;
  /** A command_error that the step does not handle. */
  error?: Branch;
  /** Result branches that apply on every step of a command unless the step handles the key. */
  on: Partial<Record<ActionName, { exact: Record<string, Branch>; patterns: ResultPattern[] }>>;
}

export interface FlowModel {
  /**
   * The language version: 2 allows http, subflows, calendars, prompt tables, environments, sensitive values and valid:.
   */
  version: 1 | 2;
  name: string;
  /** Where `name:` gives the name (absent: the name comes from the file name). */
  namePos?: Pos;
  file: string;
  description?: string;
  start: string;
  /** Default TTS voice for `say:` and plain-text media. */
  voice: string;
  vars: Record<string, Value>;
  /** Variables masked wherever the call is shown: logs, call summary, admin API, recordings, traces (version 2). */
  sensitive?: string[];
  /**
   * Environment variables the flow's http steps may read as secrets.X (version 2); their values never enter the state.
   */
  secrets?: string[];
  handlers: Handlers;
  steps: Record<string, Step>;
  /** Opening-hours calendars by name (version 2). */
  calendars?: Record<string, Calendar>;
  /** Languages by tag, with their voice; the prompt table; how a call's language is chosen (version 2). */
  languages?: Record<string, { voice: string }>;
  language?: LanguageChoice;
  prompts?: Record<string, Record<string, MediaParam>>;
  /** Every environment's substitutions (version 2), and the one selected: its name and values (`env.*`). */
  environments?: Record<string, Record<string, EnvValue>>;
  environment?: string;
  /** The selected environment's literal values. */
  env?: Record<string, string>;
  /** The selected environment's values read from the server's environment when the call runs (`from_env:`). */
  envFrom?: Record<string, EnvFrom>;
  /** Set in a module file: its params, results and returns. */
  module?: ModuleSpec;
  /**
   * Set by the link stage on a flow that enters modules: each module (by its namespace
   * prefix, e.g. `pin-check:`) with what its steps need at run time. The module's steps
   * are in `steps` under namespaced ids (`pin-check:ask`), once per module.
   */
  modules?: Record<string, LinkedModule>;
}

/** What a linked flow keeps of each module it may enter. */
export interface LinkedModule {
  name: string;
  file: string;
  /** The namespaced start state. */
  start: string;
  vars: Record<string, Value>;
  params: ModuleSpec['params'];
  handlers: Handlers;
}

/** The flow-wide handlers that apply at a step of a linked flow: its module's, or the flow's. */
export function handlersOf(model: Pick<FlowModel, 'handlers' | 'modules'>, id: string): Handlers {
  if (!model.modules) return model.handlers;
  const i = id.lastIndexOf(':');
  return i < 0 ? model.handlers : (model.modules[id.slice(0, i + 1)]?.handlers ?? model.handlers);
}

/** An environment value: literal text, or a variable of the server's environment (`{ from_env, default }`). */
export type EnvValue = string | { from_env: string; default?: string };

/**
 * A value of the selected environment read from the server's environment: the variable, the text when it is not set,
 * and whether it is a secret (the variable is declared in `secrets:`: read in http requests only, masked).
 */
export interface EnvFrom {
  name: string;
  default?: string;
  secret?: boolean;
}

export interface LanguageChoice {
  default: string;
  /** ISO 3166 country (of the caller's number) -> language. */
  byCountry: Record<string, string>;
  /** vars.<variable>, once set to a declared language, chooses it. */
  variable?: string;
}

/**
 * An http step (version 2). Its result keys live in the step's `on`: `ok` (any 2xx) and
 * exact status codes in `exact` (as does `timeout`, taken on the TIMEOUT error), `error`
 * and `default` as for any step.
 */
export interface HttpSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Templated (vars, call, env, secrets). */
  url: string;
  /** Templated, or the text of a CEL value (`{ expr }`). */
  headers: Record<string, HttpText>;
  /** Templated, or a CEL value (`{ expr }`): a list gives the key once per item. */
  query: Record<string, HttpText>;
  /** A JSON body, strings templated at any depth, `{ expr }` maps typed CEL values. */
  body?: ExprValue;
  timeout_ms: number;
  retries: number;
  /**
   * Answered while the lookup runs past a request's deadline: the n-th wait plays the n-th entry (the last once
   * exhausted).
   */
  filler?: FillerEntry[];
}

/** A header or query value: a template, or a CEL expression (`{ expr: "..." }`). */
export type HttpText = string | { expr: string };

/**
 * A value whose parts may be CEL expressions (`{ expr: "..." }` at any depth of an http body): a literal part is plain
 * data (strings templated), an expression takes the CEL value, typed.
 */
export type ExprValue =
  | { kind: 'literal'; value: Value }
  | { kind: 'expr'; expr: string }
  | { kind: 'list'; items: ExprValue[] }
  | { kind: 'map'; entries: [string, ExprValue][] };

/**
 * A queue step (version 2): its result keys live in the step's `on` (`timeout`, `empty` and `bridged` in `exact`,
 * `error`); the waiting loop is states of the machine (src/flow/machine-queue.ts).
 */
export interface QueueSpec {
  name: string;
  /** Templated E.164 numbers, or a CEL expression giving a list of them. */
  agents: { kind: 'list'; items: string[] } | { kind: 'expr'; expr: string };
  strategy: 'in_order' | 'round_robin' | 'longest_idle';
  /** Seconds. */
  ring_time: number;
  wrap_up: number;
  max_wait: number;
  handle_time: number;
  max_talk: number;
  /** Chunks played in turn while the caller waits, looped. */
  hold: FillerEntry[];
  /** Played every `every` seconds of waiting (the first at once), instead of the hold chunk. */
  announce?: { every: number; media: MediaParam };
  /** Whispered to the agent who answers. */
  whisper?: MediaParam;
  cli?: string;
}

export type FillerEntry = { kind: 'media'; media: MediaSpec } | { kind: 'wait'; wait: number };

export const DEFAULT_VOICE = 'TTS_EN-GB_SERENA';
