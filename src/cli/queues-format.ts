/**
 * How `callscript queues` prints what the admin API answers (docs/admin.md "Queues"): per queue, a line of counts,
 * then its callers (position, callid, waited, the agent rung) and its agents (number, state, paused, since, until,
 * the call it is on). Pure text functions of the API's JSON; what comes from callers, flows and the store is shown
 * with its control characters escaped (tables do it; src/terminal/printable.ts).
 */
import type { QueueJson } from '../http/queues.js';
import { printable } from '../terminal/printable.js';
import { duration, shortTime, table } from './calls-format.js';

export type { QueueJson };

const indent = (text: string) =>
  text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

/** The queue's counts in one line. */
export function queueHead(q: QueueJson): string {
  const a = q.agentCounts;
  const waiting = q.waiting === 0 ? 'nobody waiting' : `${q.waiting} waiting, the longest ${duration(q.longestWaitMs)}`;
  return printable(
    `queue ${q.name}: ${waiting}; agents ${a.free} free, ${a.busy} busy, ${a.wrapUp} wrap-up, ${a.paused} paused; ` +
      `answered ${q.answered}, abandoned ${q.abandoned}, timed out ${q.timedOut}` +
      (q.handleMs === null ? '' : `; mean handling ${duration(q.handleMs)}`),
  );
}

/** One queue: its counts, its line, its agents. */
export function queueText(q: QueueJson): string {
  const parts = [queueHead(q)];
  if (q.line.length > 0) {
    parts.push(
      indent(
        table(
          ['POSITION', 'CALLID', 'WAITED', 'RINGING'],
          q.line.map((c) => [
            c.position === null ? '-' : String(c.position),
            c.callid,
            duration(c.waitedMs),
            c.ringing ?? '-',
          ]),
        ),
      ),
    );
    if (q.waiting > q.line.length) parts.push(`  (${q.waiting - q.line.length} more waiting after these)`);
  }
  parts.push(
    q.agents.length === 0
      ? '  no agents known yet (an agent is known from the first call that lists it, or a pause)'
      : indent(
          table(
            ['AGENT', 'STATE', 'PAUSED', 'SINCE (UTC)', 'UNTIL (UTC)', 'CALL'],
            q.agents.map((a) => [
              a.number,
              a.state,
              a.paused ? 'yes' : 'no',
              shortTime(a.since),
              shortTime(a.until),
              a.callid === null ? '-' : a.queue === null || a.queue === q.name ? a.callid : `${a.callid} (${a.queue})`,
            ]),
          ),
        ),
  );
  return parts.join('\n');
}

/** Every queue, a blank line between two. */
export function queuesText(queues: readonly QueueJson[]): string {
  return queues.length === 0
    ? 'no queues (none has had a caller or a paused agent)'
    : queues.map(queueText).join('\n\n');
}
