/**
 * The simulator's transcript (`callscript simulate`): each event as lines of text, escaped (a flow's prompts, a
 * caller's keys, a lookup's answer may hold a terminal's control characters), coloured on a terminal.
 */
import type { Value } from '../flow/model.js';
import { printable } from '../terminal/printable.js';
import type { SimEvent } from './simulate.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A call's clock as the header line shows it: `2026-11-22 10:00:00 UTC (Sunday)`. */
export function clockText(now: number): string {
  const d = new Date(now);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC (${DAYS[d.getUTCDay()]})`;
}

export interface RenderOptions {
  color?: boolean;
}

/**
 * A piece of an event's text, escaped (a flow's prompts, a caller's keys, a lookup's answer may hold a terminal's
 * control characters: src/terminal/printable.ts), then coloured when asked.
 */
const paint = (on: boolean | undefined, code: string, s: string) =>
  on ? `\x1b[${code}m${printable(s)}\x1b[0m` : printable(s);

/** A list of agents, briefly: the first five, then how many more. */
function listText(agents: readonly string[]): string {
  if (agents.length === 0) return 'none';
  return agents.length > 5 ? `${agents.slice(0, 5).join(', ')} and ${agents.length - 5} more` : agents.join(', ');
}

/** The vars as `name=value` (values as JSON), escaped. */
export function varsText(vars: Record<string, Value>): string {
  const parts = Object.entries(vars).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return parts.length > 0 ? printable(parts.join(' ')) : '(none)';
}

/** One event as lines of text (each ending with a newline); questions render nothing (see promptText). */
export function render(e: SimEvent, o: RenderOptions = {}): string {
  const c = o.color;
  switch (e.kind) {
    case 'start':
      return (
        paint(c, '1', `call to flow ${e.flow} from ${e.from || '(withheld)'} to ${e.to} at ${clockText(e.now)}`) + '\n'
      );
    case 'command': {
      const head = `#${e.n} ${e.say ? `${e.step} (branch say)` : e.step}: ${e.command}`;
      const lines = [paint(c, '1;36', head)];
      for (const h of e.hears) {
        // media_id is what the caller hears; other media params (welcome, whisper...) are named.
        const named = /^([a-z_]+): (.*)$/s.exec(h);
        lines.push(named ? `  ${named[1]}: ${paint(c, '32', named[2]!)}` : `  hears: ${paint(c, '32', h)}`);
      }
      for (const d of e.details) lines.push(`  ${printable(d)}`);
      return lines.join('\n') + '\n';
    }
    case 'sms':
      return paint(c, '1;36', `${e.step}: sms to ${e.to}`) + `\n  text: ${paint(c, '32', JSON.stringify(e.body))}\n`;
    case 'queue':
      return (
        paint(
          c,
          '1;36',
          `${e.step}: queue ${e.queue} ${e.op}` +
            (e.agents ? ` (agents ${listText(e.agents)}; waited ${e.waited ?? 0} s)` : ''),
        ) + '\n'
      );
    case 'http':
      return (
        paint(
          c,
          '1;36',
          `${e.step}: http ${e.method} ${e.url}${e.wait ? ' (waited for again after the filler)' : ''}`,
        ) +
        '\n' +
        (e.body !== undefined && !e.wait ? `  body: ${paint(c, '32', e.body)}\n` : '')
      );
    case 'vars':
      return paint(c, '2', `  vars: ${varsText(e.vars)}`) + '\n';
    case 'question':
      return '';
    case 'answered':
      return `  -> ${printable(e.text)}${e.by ? paint(c, '2', ` (${e.by})`) : ''}\n`;
    case 'note':
      return paint(c, '33', `  ${e.text}`) + '\n';
    case 'end': {
      const lines = [paint(c, '1', `call ended: ${e.status} (${e.why})`), 'path:'];
      e.path.forEach((p, i) =>
        lines.push(
          printable(
            `  ${i + 1}. ${p.step}${p.say ? ' (branch say)' : ''}: ${p.command}` +
              (p.outcome !== undefined ? ` -> ${p.outcome}` : ''),
          ),
        ),
      );
      lines.push(`vars: ${varsText(e.vars)}`);
      return lines.join('\n') + '\n';
    }
  }
}
