/**
 * The caller of a caller script (the emulator's format, docs/caller-script.md) as answers to the simulator's
 * questions (`callscript simulate --caller`): its actions matched in order against the commands, as the emulator
 * plays them; an sms or a lookup takes its first choice, a queue's poll rings each agent once, then finds it empty.
 */
import { CallerActor } from '../emulator/caller/actor.js';
import type { CallerScript } from '../emulator/caller/types.js';
import { simulate as simulateCommand, type CallMedia } from '../emulator/driver/simulate.js';
import { Ids } from '../emulator/ids.js';
import type { WireValue } from '../protocol/rt.js';
import type { Answer, Question } from './sim-questions.js';
import { scriptedChoice } from './sim-queue.js';
import type { SimEvent, SimOptions } from './simulate.js';

/** The caller of a caller script (the emulator's format), as answers to the questions. */
export class ScriptedCaller {
  private readonly actor: CallerActor;
  private readonly media: CallMedia;
  private lastParams: Record<string, WireValue> = {};
  /** The agents this caller's queue answers have rung (each once). */
  private readonly rung = new Set<string>();
  constructor(readonly script: CallerScript) {
    this.actor = new CallerActor(script);
    this.media = { callid: '1000001', ids: new Ids('callscript'), recordings: new Map() };
  }

  /** Session options from the script's `call`. */
  options(): SimOptions {
    const c = this.script.call;
    const o: SimOptions = {
      from: c.from,
      to: c.to,
      name: c.name,
      variables: c.variables,
      cdrField: c.cdr_field,
      // an outbound call that fails (call.answer NOANSWER, BUSY...): one request with that terminal status
      status: c.answer !== 'ANSWER' ? c.answer : c.status,
    };
    if (c.date) o.date = c.date;
    if (c.max_commands) o.maxCommands = c.max_commands;
    return o;
  }

  /** Remember the params of each command event (the outcome depends on them). */
  saw(e: SimEvent): void {
    if (e.kind === 'command') this.lastParams = e.params;
  }

  /** The answer to `q`, with where it comes from. */
  answer(q: Question): { answer: Answer; text: string; by: string } {
    // a caller script answers no sms nor lookup: each takes its first choice (sent, 200)
    if (q.kind === 'sms' || q.kind === 'http')
      return { answer: q.options[0]!.answer, text: q.options[0]!.label, by: 'built-in' };
    // nor a queue: each agent offered is rung once, in turn, then the queue is empty (as a store answers)
    if (q.kind === 'queue') {
      const o = scriptedChoice(q, this.rung);
      if (o.answer.kind === 'queue' && o.answer.agent) this.rung.add(o.answer.agent);
      else this.rung.clear();
      return { answer: o.answer, text: o.label, by: 'built-in' };
    }
    const d = this.actor.next(q.command);
    const params = this.lastParams as Record<string, unknown>;
    if (d.hangup) {
      // as the emulator does: a caller who hangs up while recording leaves the recording (its file name is sent)
      if (q.command !== 'record') return { answer: { kind: 'hangup' }, text: 'hang up', by: d.source };
      const kept = simulateCommand('record', params, {}, this.media).result;
      return {
        answer: { kind: 'hangup', result: kept },
        text: `hang up (the recording ${kept} is kept)`,
        by: d.source,
      };
    }
    const r = simulateCommand(q.command, params, d.outcome, this.media);
    this.actor.completed();
    if (r.error) return { answer: { kind: 'error', error: r.error }, text: `command_error ${r.error}`, by: d.source };
    if (r.bridged) return { answer: { kind: 'bridged' }, text: 'answer (bridged: call ends)', by: d.source };
    return { answer: { kind: 'result', result: r.result }, text: r.result === '' ? 'done' : r.result, by: d.source };
  }

  unused(): string[] {
    return this.actor.unused();
  }
}
