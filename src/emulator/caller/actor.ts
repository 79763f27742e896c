/**
 * The caller's part, call by call: the script's actions are matched in order, one at a
 * time, against the commands as they come. The action at the head of the list applies
 * to a command it names (`read: "1"` to the next read; `error` and `hangup: any` to any
 * command); a command it does not name takes its default (the script's `defaults`, else
 * the built-in first success outcome).
 */
import type { CommandName } from '../../protocol/commands.js';
import type { Action, CallerScript, Outcome } from './types.js';

export interface Decision {
  /** The caller hangs up during this command. */
  hangup: boolean;
  outcome: Outcome;
  /** Where the outcome comes from: an action's `file:line:col`, "defaults" or "built-in". */
  source: string;
  /**
   * An action of the script was matched to this command (a command action or `error`): an outcome given explicitly
   * for it, which wins over the emulator's agents table (`defaults` and the built-in outcome do not).
   */
  scripted: boolean;
}

export class CallerActor {
  private readonly queue: Action[];
  private hangupNext = false;
  private hangupAfterThis = false;

  constructor(private readonly script: CallerScript) {
    this.queue = [...script.actions];
  }

  /** What the caller does on `command`. */
  next(command: CommandName): Decision {
    if (this.hangupNext) return { hangup: true, outcome: {}, source: 'hangup_after', scripted: true };
    const head = this.queue[0];
    if (head && applies(head, command)) {
      this.queue.shift();
      switch (head.kind) {
        case 'command':
          return { hangup: false, outcome: head.outcome, source: head.where, scripted: true };
        case 'error':
          return { hangup: false, outcome: { error: head.error }, source: head.where, scripted: true };
        case 'hangup':
          return { hangup: true, outcome: {}, source: head.where, scripted: true };
        case 'hangup_after':
          this.hangupAfterThis = true;
          break;
      }
    }
    const d = this.script.defaults[command];
    return { hangup: false, outcome: d ?? {}, source: d ? 'defaults' : 'built-in', scripted: false };
  }

  /** The command ended normally: a pending `hangup_after` now takes effect. */
  completed(): void {
    if (this.hangupAfterThis) {
      this.hangupAfterThis = false;
      this.hangupNext = true;
    }
  }

  /** Actions no command used, as `label (file:line:col)`. */
  unused(): string[] {
    return this.queue.map((a) => `${a.label} (${a.where})`);
  }
}

function applies(a: Action, command: CommandName): boolean {
  switch (a.kind) {
    case 'command':
      return a.command === command;
    case 'error':
      return true;
    case 'hangup':
    case 'hangup_after':
      return a.command === 'any' || a.command === command;
  }
}
