// The flows view: every flow with its current and newest version, live calls, and the edits
// that were refused (the flow serves its previous version) with their diagnostics.

import { h, fill, link, table, row } from './dom.js';
import { send } from './api.js';
import { place, ver } from './format.js';

/** A diagnostic as one line: file:line:col CODE message (hint). */
export function diagnosticItem(d) {
  return h(
    'li',
    { class: ['diagnostic', `diagnostic--${d.severity ?? 'error'}`] },
    h('code', { class: 'diag-place' }, place(d)),
    ' ',
    h('span', { class: 'diag-code' }, d.code),
    ' ',
    h('span', { class: 'diag-message' }, d.message),
    d.hint ? h('div', { class: 'diag-hint' }, d.hint) : null,
  );
}

function status(f) {
  if (f.deleted) return h('span', { class: 'pill pill--deleted' }, 'deleted (live calls finish)');
  if (f.errors.length > 0)
    return h('span', { class: 'pill pill--refused' }, 'edit refused: serving the previous version');
  return h('span', { class: 'pill pill--ok' }, 'serving');
}

export function flowsView() {
  const result = h('span', { class: 'reload-result', role: 'status' });
  const reload = h('button', { type: 'button', class: 'reload' }, 'Reload flows');
  const list = h('div', { class: 'flows-list' });
  const refused = h('section', { class: 'refused', hidden: true });
  const el = h(
    'section',
    { class: 'view view--flows' },
    h('div', { class: 'view-head' }, h('h1', null, 'Flows'), reload, result),
    list,
    refused,
  );
  let refresh = async () => {};
  reload.addEventListener('click', async () => {
    reload.disabled = true;
    fill(result, 'reloading…');
    try {
      const r = await send('POST', 'reload');
      const parts = [];
      if (!r.ok) parts.push(r.message ?? 'the reload failed');
      if (r.published?.length) parts.push(`published ${r.published.map((p) => `${p.name} ${p.version}`).join(', ')}`);
      if (r.refused?.length) parts.push(`refused ${r.refused.map((x) => x.file).join(', ')}`);
      if (r.deleted?.length) parts.push(`deleted ${r.deleted.join(', ')}`);
      fill(result, parts.length ? parts.join('; ') : 'nothing changed');
    } catch (err) {
      fill(result, `reload failed: ${err.message}`);
    } finally {
      reload.disabled = false;
      await refresh();
    }
  });
  return {
    title: 'Flows',
    el,
    bindRefresh(f) {
      refresh = f;
    },
    update(ctx) {
      const flows = ctx.flows?.flows ?? [];
      fill(
        list,
        table(
          'flows',
          ['Flow', 'File', 'Current version', 'Newest version', 'Live calls', 'Calls', 'Errors', 'Status'],
          flows.map((f) => {
            const cur = f.versions.find((v) => v.current);
            const calls = f.versions.reduce((n, v) => n + (v.calls ?? 0), 0);
            const errors = f.versions.reduce((n, v) => n + (v.errors ?? 0), 0);
            return row({ 'data-flow': f.name, class: f.errors.length > 0 ? 'has-refused' : null }, [
              h('td', { class: 'flow-name' }, link(f.name, 'flow', f.name)),
              f.file,
              h(
                'td',
                { class: 'mono' },
                ver(f.current),
                f.pinned ? h('span', { class: 'pill' }, 'pinned') : null,
                f.canary ? h('span', { class: 'pill' }, `canary ${f.canary.percent}%`) : null,
                cur?.publishedAt ? h('div', { class: 'muted small' }, cur.publishedAt) : null,
              ),
              h('td', { class: 'mono' }, ver(f.newest)),
              h('td', { class: 'num live-calls' }, String(f.liveCalls)),
              h('td', { class: 'num' }, String(calls)),
              h('td', { class: 'num' }, String(errors)),
              h(
                'td',
                null,
                status(f),
                f.errors.length > 0 ? h('ul', { class: 'diagnostics' }, f.errors.map(diagnosticItem)) : null,
              ),
            ]);
          }),
          'No flow is loaded.',
        ),
      );
      const files = ctx.flows?.refused ?? [];
      refused.hidden = files.length === 0;
      fill(
        refused,
        h('h2', null, `Refused edits (${files.length})`),
        h(
          'p',
          { class: 'muted' },
          'These files have errors: their flows keep serving the version before the edit (a new file serves ' +
            'nothing) until the file is fixed.',
        ),
        files.map((r) =>
          h(
            'div',
            { class: 'refused-file', 'data-file': r.file },
            h('h3', { class: 'mono' }, r.file),
            h('ul', { class: 'diagnostics' }, r.diagnostics.map(diagnosticItem)),
          ),
        ),
      );
    },
  };
}
