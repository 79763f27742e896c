/**
 * Everything the emulator's parts share, passed explicitly (no module-level state):
 * the store, the clock, the account, the SMS and call settings, and the live calls.
 */
import type { EmulatorStore } from './store.js';
import type { Clock, Sleep } from './time.js';
import type { SmsSettings } from './sms/record.js';
import type { SmsNote } from './driver/transcript.js';
import type { EmulatorWebhooks } from './webhooks/events.js';
import type { AgentTable } from './agents/table.js';

export interface Account {
  login: string;
  password: string;
}

/** A call in progress, as other calls (hangup_callid) and shutdown see it. */
export interface LiveCall {
  id: string;
  callid: string;
  /** The request of this call the customer server is answering now (0 between requests). */
  answering: number;
  /** The transcript's list of SMS the customer server sent for this call. */
  sms: SmsNote[];
  /** Asks the call to end at its next step; `by` says why. */
  hangUp(by: 'hangup_callid' | 'emulator', reason: string): void;
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CallSettings {
  /** Wait for real the simulated duration of each command. */
  realtime: boolean;
  /** Real time runs this many times faster: a wait of `ms` sleeps `ms / speed` (1 to 1000). */
  speed: number;
  /** The reply time limit (the service's 5 seconds). */
  replyTimeoutMs: number;
  /** Longest a call may run, in commands, before the emulator hangs up. */
  maxCommands: number;
  /** Calls running at once, at most; more are refused (busy) until some end. */
  maxLiveCalls: number;
}

/** An injected SMS failure (control API): sends to that number fail with it. */
export interface SmsFailure {
  http: number;
  code: number;
  message: string;
}

export interface EmulatorContext {
  store: EmulatorStore;
  clock: Clock;
  sleep: Sleep;
  account: Account;
  sms: SmsSettings;
  calls: CallSettings;
  /** Recipient (E.164) -> the failure its SMS get (control API; not persisted). */
  smsFailures: Map<string, SmsFailure>;
  /** callid -> the live call. */
  live: Map<string, LiveCall>;
  /** Calls running in the background (calls.realtime, control API without wait). */
  background: Set<Promise<unknown>>;
  /** The emulated agents (number -> behaviour) and their live state across calls (--agents, control API). */
  agents: AgentTable;
  /** Webhook subscriptions and the events sent to them (SMS status changes, inbound SMS). */
  webhooks: EmulatorWebhooks;
  log: Logger;
}
