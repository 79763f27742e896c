/**
 * CallMetrics (src/http/metrics.ts) with events made by hand: the whole text of a scrape,
 * exactly; its histograms line for line as prom-client's own Histogram gives them; the
 * worker parts summed as the cluster sums them; traffic from parts.
 */
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallMetrics, DURATION_BUCKETS } from '../../src/http/metrics.js';
import type { StepEvent } from '../../src/engine/observe.js';
import type { MetricsCluster, MetricsPart } from '../../src/http/metrics-cluster.js';

function event(over: Partial<StepEvent> = {}): StepEvent {
  return {
    callid: '1',
    flow: 'desk',
    version: 'aaaaaaaaaaaa',
    outcome: 'ok',
    answer: 'answered',
    late: false,
    at: 0,
    ms: 3,
    request: { command: '', result: '', error: '', callStatus: 'UP', commandId: 0 },
    step: 'menu',
    isNew: false,
    ended: false,
    transitions: [],
    effects: [],
    errors: [],
    ...over,
  };
}

const deps = (over: Partial<ConstructorParameters<typeof CallMetrics>[0]> = {}) => ({
  liveCalls: () => [['desk', 2]] as [string, number][],
  flows: () => ['desk', 'other'],
  refusedEdits: () => 0,
  ...over,
});

/** The text without the process's default metrics (appended after this registry's). */
const own = (text: string) => text.slice(0, text.indexOf('# HELP callscript_process_')).replace(/\n+$/, '\n');

describe('CallMetrics', () => {
  it('a scrape, whole and exact', async () => {
    const m = new CallMetrics(deps());
    m.step(event({ isNew: true, ms: 0.4 }));
    m.step(
      event({
        request: { command: 'read', result: '1', error: '', callStatus: 'UP', commandId: 1 },
        from: 'menu',
        step: 'sales',
        transitions: ['menu:1'],
        ms: 30,
        effects: [{ kind: 'sms', step: 'text', outcome: 'ok', value: 'H', ms: 120 }],
      }),
    );
    m.step(
      event({
        step: 'end',
        ended: true,
        callOutcome: 'completed',
        transitions: ['sales:NOANSWER', 'bye:default'],
        ms: 4200,
        late: true,
      }),
    );
    m.step(
      event({
        flow: undefined,
        version: undefined,
        step: undefined,
        outcome: 'no_route',
        answer: 'not_found',
        code: 'UNKNOWN_FLOW',
        ms: 0.1,
      }),
    );
    m.step(
      event({
        flow: undefined,
        version: undefined,
        step: undefined,
        outcome: 'store_unavailable',
        answer: 'unavailable',
        code: 'STORE_UNAVAILABLE',
        ms: 2,
      }),
    );
    m.reloaded({ ok: true, reason: 'x', published: [], unchanged: [], deleted: [], kept: [], refused: [] });
    m.reloaded({
      ok: false,
      reason: 'x',
      published: [],
      unchanged: [],
      deleted: [],
      kept: [],
      refused: [],
      message: 'gone',
    });
    m.reloaded({
      ok: true,
      reason: 'x',
      published: [],
      unchanged: [],
      deleted: [],
      kept: [],
      refused: [{ file: 'a.yaml', diagnostics: [] }],
    });
    m.countWebhooks(() => [
      { type: 'sms.mo', result: 'ok', count: 2 },
      { type: 'unknown', result: 'bad_signature', count: 1 },
    ]);
    const text = own(await m.text());
    const desk = (step: string, le: number[], sum: number, n: number) => [
      ...DURATION_BUCKETS.map(
        (b, i) => `callscript_request_duration_seconds_bucket{le="${b}",flow="desk",step="${step}"} ${le[i]}`,
      ),
      `callscript_request_duration_seconds_bucket{le="+Inf",flow="desk",step="${step}"} ${n}`,
      `callscript_request_duration_seconds_sum{flow="desk",step="${step}"} ${sum}`,
      `callscript_request_duration_seconds_count{flow="desk",step="${step}"} ${n}`,
    ];
    const all = (n: number) => DURATION_BUCKETS.map(() => n);
    expect(text).toBe(
      [
        '# HELP callscript_requests_total Requests handled on the real-time route, by the flow version that ' +
          'served them ("" when none did) and outcome (ok, replay, stale, rejected, no_route, call_limit, ' +
          'store_unavailable, error).',
        '# TYPE callscript_requests_total counter',
        'callscript_requests_total{flow="desk",version="aaaaaaaaaaaa",outcome="ok"} 3',
        'callscript_requests_total{flow="",version="",outcome="no_route"} 1',
        'callscript_requests_total{flow="",version="",outcome="store_unavailable"} 1',
        '',
        '# HELP callscript_calls_started_total Calls started, by flow version.',
        '# TYPE callscript_calls_started_total counter',
        'callscript_calls_started_total{flow="desk",version="aaaaaaaaaaaa"} 1',
        '',
        '# HELP callscript_calls_ended_total Calls ended, by flow version and outcome (completed, transferred, ' +
          'abandoned, error, ended_by_admin).',
        '# TYPE callscript_calls_ended_total counter',
        'callscript_calls_ended_total{flow="desk",version="aaaaaaaaaaaa",outcome="completed"} 1',
        '',
        "# HELP callscript_request_duration_seconds Time to handle a request (queueing behind the call's " +
          'previous request included), by flow and the step answered ("" when none).',
        '# TYPE callscript_request_duration_seconds histogram',
        ...desk('menu', all(1), 0.0004, 1),
        ...desk('sales', [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], 0.03, 1),
        ...desk('end', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 4.2, 1),
        ...DURATION_BUCKETS.map(
          (b, i) => `callscript_request_duration_seconds_bucket{le="${b}",flow="",step=""} ${[1, 2][i] ?? 2}`,
        ),
        'callscript_request_duration_seconds_bucket{le="+Inf",flow="",step=""} 2',
        'callscript_request_duration_seconds_sum{flow="",step=""} 0.0021',
        'callscript_request_duration_seconds_count{flow="",step=""} 2',
        '',
        '# HELP callscript_deadline_fallbacks_total Requests answered with the fallback command because ' +
          'their step missed the deadline, by flow.',
        '# TYPE callscript_deadline_fallbacks_total counter',
        'callscript_deadline_fallbacks_total{flow="desk"} 1',
        '',
        '# HELP callscript_effects_total Effects performed (sms, http, queue), by kind and outcome (ok, pending, or ' +
          'the error kind).',
        '# TYPE callscript_effects_total counter',
        'callscript_effects_total{kind="sms",outcome="ok"} 1',
        '',
        '# HELP callscript_effect_duration_seconds Time an effect took, by kind.',
        '# TYPE callscript_effect_duration_seconds histogram',
        ...DURATION_BUCKETS.map(
          (b) => `callscript_effect_duration_seconds_bucket{le="${b}",kind="sms"} ${b >= 0.25 ? 1 : 0}`,
        ),
        'callscript_effect_duration_seconds_bucket{le="+Inf",kind="sms"} 1',
        'callscript_effect_duration_seconds_sum{kind="sms"} 0.12',
        'callscript_effect_duration_seconds_count{kind="sms"} 1',
        '',
        '# HELP callscript_live_calls Live calls in this process (summed over the workers), by flow.',
        '# TYPE callscript_live_calls gauge',
        'callscript_live_calls{flow="desk"} 2',
        'callscript_live_calls{flow="other"} 0',
        '',
        '# HELP callscript_reloads_total Reloads of the flows directory, by result: ok, or refused (at least ' +
          'one edit refused, or the directory could not be read). With workers, the most any worker counted.',
        '# TYPE callscript_reloads_total counter',
        'callscript_reloads_total{result="ok"} 1',
        'callscript_reloads_total{result="refused"} 2',
        '',
        '# HELP callscript_refused_edits Flow files whose last edit is refused now (the flow serves its ' +
          'previous version). With workers, the most any worker has.',
        '# TYPE callscript_refused_edits gauge',
        'callscript_refused_edits 0',
        '',
        '# HELP callscript_store_errors_total Requests answered 503 STORE_UNAVAILABLE: the call store could ' +
          'not be reached in time.',
        '# TYPE callscript_store_errors_total counter',
        'callscript_store_errors_total 1',
        '',
        '# HELP callscript_transitions_total Transitions the flows took, by flow version and coverage key ' +
          "(as in callscript test --coverage): the traffic of each edge of the flow's graph.",
        '# TYPE callscript_transitions_total counter',
        'callscript_transitions_total{flow="desk",version="aaaaaaaaaaaa",transition="menu:1"} 1',
        'callscript_transitions_total{flow="desk",version="aaaaaaaaaaaa",transition="sales:NOANSWER"} 1',
        'callscript_transitions_total{flow="desk",version="aaaaaaaaaaaa",transition="bye:default"} 1',
        '',
        '# HELP callscript_webhooks_total Events the webhook route took (docs/webhooks.md), by type ' +
          '(sms.mt.status_update, sms.mo, other; unknown before an event could be trusted) and result (ok, ' +
          'duplicate, ignored, bad_signature, bad_event, bad_json, bad_time, unsupported_type, too_large, ' +
          'store_unavailable).',
        '# TYPE callscript_webhooks_total counter',
        'callscript_webhooks_total{type="sms.mo",result="ok"} 2',
        'callscript_webhooks_total{type="unknown",result="bad_signature"} 1',
        '',
        '# HELP callscript_processes Processes whose metrics this answer sums: 1, or with --workers N the ' +
          'workers that answered the scrape in time.',
        '# TYPE callscript_processes gauge',
        'callscript_processes 1',
        '',
      ].join('\n'),
    );
  });

  it("its histogram lines are prom-client's own Histogram's, for the same observations", async () => {
    const seconds = [0, 0.001, 0.0011, 0.0025, 0.003, 0.049, 0.05, 0.7, 1, 2.5, 3.99, 4, 4.01, 5, 5.5, 60];
    const m = new CallMetrics(deps());
    for (const s of seconds) m.step(event({ ms: s * 1000, step: 'menu' }));
    const r = new Registry();
    const h = new Histogram({
      name: 'callscript_request_duration_seconds',
      help: 'x',
      labelNames: ['flow', 'step'],
      buckets: [...DURATION_BUCKETS],
      registers: [r],
    });
    for (const s of seconds) h.observe({ flow: 'desk', step: 'menu' }, s);
    const samples = (t: string) =>
      t.split('\n').filter((l) => l.startsWith('callscript_request_duration_seconds_') && !l.includes('_sum'));
    expect(samples(await m.text())).toEqual(samples(await r.metrics()));
  });

  it(
    'counts past 64 distinct effect outcomes as OTHER (a ' + 'custom sender cannot grow the series without bound)',
    async () => {
      const m = new CallMetrics(deps());
      for (let i = 0; i < 100; i++) m.step(event({ effects: [{ kind: 'sms', step: 's', outcome: `E${i}`, ms: 1 }] }));
      m.step(event({ effects: [{ kind: 'sms', step: 's', outcome: 'E3', ms: 1 }] }));
      const lines = (await m.text()).split('\n').filter((l) => l.startsWith('callscript_effects_total{'));
      expect(lines).toHaveLength(65);
      expect(lines).toContain('callscript_effects_total{kind="sms",outcome="E3"} 2');
      expect(lines).toContain('callscript_effects_total{kind="sms",outcome="OTHER"} 36');
    },
  );

  it(
    'clustered: the parts of the workers summed (reloads and refused edits: the most of any), traffic summed ' +
      'across them',
    async () => {
      const a = new CallMetrics(deps({ refusedEdits: () => 1 }));
      const b = new CallMetrics(deps({ liveCalls: () => [['desk', 3]], refusedEdits: () => 1 }));
      a.step(event({ transitions: ['menu:1'], isNew: true }));
      b.step(event({ transitions: ['menu:1', 'sales:NOANSWER'] }));
      b.step(event({ version: 'bbbbbbbbbbbb', transitions: ['menu:1'] }));
      b.step(event({ flow: 'other', transitions: ['x:default'] }));
      const ok = { ok: true, reason: 'x', published: [], unchanged: [], deleted: [], kept: [], refused: [] };
      a.reloaded(ok);
      b.reloaded(ok);
      const parts = async (only?: readonly string[]) => [await a.part(only), await b.part(only)];
      const cluster: MetricsCluster = {
        gather: async (only) => ({ parts: await parts(only), expected: 2 }),
        answer: () => () => {},
      };
      const c = new CallMetrics(deps({ cluster }));
      const text = await c.text();
      const pick = (prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
      expect(pick('callscript_requests_total{')).toEqual([
        'callscript_requests_total{flow="desk",version="aaaaaaaaaaaa",outcome="ok"} 2',
        'callscript_requests_total{flow="desk",version="bbbbbbbbbbbb",outcome="ok"} 1',
        'callscript_requests_total{flow="other",version="aaaaaaaaaaaa",outcome="ok"} 1',
      ]);
      expect(pick('callscript_live_calls{')).toEqual([
        'callscript_live_calls{flow="desk"} 5',
        'callscript_live_calls{flow="other"} 0',
      ]);
      expect(pick('callscript_reloads_total{')).toEqual(['callscript_reloads_total{result="ok"} 1']);
      expect(pick('callscript_refused_edits ')).toEqual(['callscript_refused_edits 1']);
      expect(pick('callscript_processes ')).toEqual(['callscript_processes 2']);
      expect(pick('callscript_request_duration_seconds_count')).toEqual([
        'callscript_request_duration_seconds_count{flow="desk",step="menu"} 3',
        'callscript_request_duration_seconds_count{flow="other",step="menu"} 1',
      ]);
      // the process metrics of both are there, summed (a version: the first)
      expect(pick('callscript_process_cpu_seconds_total ')).toHaveLength(1);
      expect(pick('callscript_nodejs_version_info')).toHaveLength(1);
      expect(await c.traffic('desk')).toEqual({
        aaaaaaaaaaaa: { 'menu:1': 2, 'sales:NOANSWER': 1 },
        bbbbbbbbbbbb: { 'menu:1': 1 },
      });
      // a part is only what was asked for
      expect((await a.part(['callscript_transitions_total'])).map((x) => (x as { name: string }).name)).toEqual([
        'callscript_transitions_total',
      ]);
    },
  );

  it(
    'clustered, the primary silent or workers missing: this worker answers alone (or with those that ' +
      'answered), and says so in the log',
    async () => {
      const warned: object[] = [];
      const log = { warn: (o: object) => warned.push(o) };
      const local = new CallMetrics(deps({ cluster: { gather: async () => undefined, answer: () => () => {} }, log }));
      local.step(event());
      expect(
        (await local.text())
          .split('\n')
          .filter((l) => l.startsWith('callscript_processes ') || l.startsWith('callscript_requests_total{')),
      ).toEqual([
        'callscript_requests_total{flow="desk",version="aaaaaaaaaaaa",outcome="ok"} 1',
        'callscript_processes 1',
      ]);
      expect(warned).toEqual([{ code: 'METRICS_PARTIAL', answered: 0, expected: null }]);
      const other = new CallMetrics(deps());
      const some = new CallMetrics(
        deps({
          cluster: { gather: async () => ({ parts: [await other.part()], expected: 3 }), answer: () => () => {} },
          log,
        }),
      );
      expect((await some.text()).split('\n').filter((l) => l.startsWith('callscript_processes '))).toEqual([
        'callscript_processes 1',
      ]);
      expect(warned[1]).toEqual({ code: 'METRICS_PARTIAL', answered: 1, expected: 3 });
    },
  );

  it("parts travel as JSON (the cluster's IPC) and sum the same", async () => {
    const a = new CallMetrics(deps());
    a.step(event({ ms: 12 }));
    const part = JSON.parse(JSON.stringify(await a.part())) as MetricsPart;
    const summed = await AggregatorRegistry.aggregate([part, part] as never).metrics();
    expect(summed).toContain('callscript_request_duration_seconds_bucket{le="0.025",flow="desk",step="menu"} 2\n');
    expect(summed).toContain('callscript_request_duration_seconds_bucket{le="0.01",flow="desk",step="menu"} 0\n');
    expect(summed).toContain('callscript_request_duration_seconds_bucket{le="+Inf",flow="desk",step="menu"} 2\n');
  });
});
