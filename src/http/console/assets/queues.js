// The queues (GET /admin/queues, refreshed every tick): per queue its counts, the callers waiting in its line
// (a row opens the call) and its agents, each with a Pause or Resume button (POST /admin/queues/:name/agents).

import { h, fill, link, table, row } from './dom.js';
import { getJson, sendJson, seg, ApiError } from './api.js';
import { clock, duration } from './format.js';

// Callers shown per line (the API's `limit`): `waiting` counts them all.
const LIMIT = 100;

/** A queue's counts in one line. */
export function countsText(q) {
  const a = q.agentCounts;
  return [
    q.waiting === 0 ? 'nobody waiting' : `${q.waiting} waiting, the longest ${duration(q.longestWaitMs)}`,
    `agents: ${a.free} free, ${a.busy} busy, ${a.wrapUp} wrap-up, ${a.paused} paused`,
    `answered ${q.answered}, abandoned ${q.abandoned}, timed out ${q.timedOut}`,
    ...(q.handleMs == null ? [] : [`mean handling ${duration(q.handleMs)}`]),
  ].join(' · ');
}

function lineTable(q) {
  return table(
    'queue-line',
    ['Position', 'Call', 'Waiting since', 'Waited', 'Ringing'],
    q.line.map((c) =>
      row({ 'data-callid': c.callid }, [
        h('td', { class: 'num' }, c.position == null ? '—' : String(c.position)),
        h('td', { class: 'mono' }, link(c.callid, 'call', c.callid)),
        clock(c.since),
        h('td', { class: 'num' }, duration(c.waitedMs)),
        h('td', { class: 'mono' }, c.ringing ?? '—'),
      ]),
    ),
    'Nobody waiting.',
  );
}

function agentsTable(q, toggle) {
  return table(
    'queue-agents',
    ['Agent', 'State', 'Paused', 'Since', 'Until', 'Call', ''],
    q.agents.map((a) => {
      const button = h('button', { type: 'button', class: 'agent-pause' }, a.paused ? 'Resume' : 'Pause');
      button.addEventListener('click', () => toggle(q.name, a, button));
      return row({ 'data-number': a.number }, [
        h('td', { class: 'mono' }, a.number),
        h('td', { class: 'agent-state' }, h('span', { class: `pill pill--${a.state}` }, a.state)),
        h('td', { class: 'agent-paused' }, a.paused ? 'paused' : 'no'),
        clock(a.since),
        clock(a.until),
        a.callid == null
          ? '—'
          : h(
              'td',
              { class: 'mono' },
              link(a.callid, 'call', a.callid),
              a.queue && a.queue !== q.name ? ` (${a.queue})` : '',
            ),
        h('td', null, button),
      ]);
    }),
    'No agent known yet: an agent is known from the first call that lists it, or a pause.',
  );
}

export function queuesView() {
  const said = h('span', { class: 'queue-result', role: 'status' });
  const list = h('div', { class: 'queues-list' });
  const el = h(
    'section',
    { class: 'view view--queues' },
    h('div', { class: 'view-head' }, h('h1', null, 'Queues'), said),
    list,
  );
  let refresh = async () => {};
  async function toggle(queue, agent, button) {
    button.disabled = true;
    const paused = !agent.paused;
    try {
      await sendJson('POST', `queues/${seg(queue)}/agents`, { number: agent.number, paused });
      fill(said, `Agent ${agent.number} ${paused ? 'paused' : 'resumed'} in ${queue}.`);
    } catch (err) {
      fill(said, `Could not ${paused ? 'pause' : 'resume'} ${agent.number}: ${err.message}`);
    } finally {
      await refresh();
    }
  }
  return {
    title: 'Queues',
    el,
    bindRefresh(f) {
      refresh = f;
    },
    async update() {
      let r;
      try {
        r = await getJson(`queues?limit=${LIMIT}`);
      } catch (err) {
        const msg =
          err instanceof ApiError && err.code === 'QUEUES_UNSUPPORTED'
            ? "This server's call store has no queues."
            : `Could not list the queues: ${err.message}`;
        fill(list, h('p', { class: 'error-text' }, msg));
        return;
      }
      const queues = r.queues ?? [];
      fill(
        list,
        queues.length === 0
          ? h('p', { class: 'muted' }, 'No queue yet: a queue appears with its first caller, or a paused agent.')
          : queues.map((q) =>
              h(
                'section',
                { class: 'queue', 'data-queue': q.name },
                h('h2', null, q.name),
                h('p', { class: 'queue-counts' }, countsText(q)),
                lineTable(q),
                q.waiting > q.line.length
                  ? h('p', { class: 'muted' }, `and ${q.waiting - q.line.length} more waiting after these`)
                  : null,
                agentsTable(q, toggle),
              ),
            ),
      );
    },
  };
}
