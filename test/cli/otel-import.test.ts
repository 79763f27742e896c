/**
 * OpenTelemetry turned on the way docs/operations.md says: an SDK set up in a module given
 * to `node --import` before `callscript serve` (here test/fixtures/otel/setup.mjs, with the
 * SDK's pieces and a file exporter). The server's spans reach the exporter, and its log
 * lines written within a request carry that span's trace_id and span_id. The banner names
 * the metrics path.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { rtBody } from '../helpers/rt.js';

const root = new URL('../..', import.meta.url).pathname;
const FLOWS = new URL('../fixtures/tracing-flows', import.meta.url).pathname;
const SETUP = new URL('../fixtures/otel/setup.mjs', import.meta.url).pathname;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
});

async function until<T>(fn: () => T | undefined, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('node --import <otel setup> callscript serve: spans exported, log lines carrying their ids', async () => {
  const spans = join(mkdtempSync(join(tmpdir(), 'callscript-otel-')), 'spans.jsonl');
  child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', SETUP, `${root}src/cli/main.ts`, 'serve', '--port', '0', '--flows', FLOWS],
    { cwd: root, env: { ...process.env, OTEL_TEST_SPANS: spans } },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', () => {});
  const base = await until(() => /on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)?.[1], `the banner\n${out}`);
  // the banner's later lines may come in a later chunk than its first
  await until(
    () => (out.includes(`  metrics: GET ${base}/metrics\n`) ? true : undefined),
    'the metrics line',
    5000,
  ).catch(() => undefined);
  expect(out).toContain(`  metrics: GET ${base}/metrics\n`);
  const post = (over = {}) =>
    fetch(`${base}/rt/desk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rtBody({ callid: '31', ...over }),
    });
  expect((await post()).status).toBe(200);
  expect((await post({ command: 'read', command_id: 1, call_status: 'HANGUP' })).status).toBe(200);
  const ended = await until(
    () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'call ended'),
    'the call ended line',
  );
  const exported = await until(
    () =>
      (existsSync(spans) ? readFileSync(spans, 'utf8').trim().split('\n') : [])
        .map(
          (l) =>
            JSON.parse(l) as { name: string; traceId: string; spanId: string; attributes: Record<string, unknown> },
        )
        .filter((s) => s.name === 'callscript.rt')
        .at(1),
    'two spans',
  );
  expect(exported.attributes).toMatchObject({
    'callscript.callid': '31',
    'callscript.flow': 'desk',
    'callscript.outcome': 'ok',
    'http.response.status_code': 200,
  });
  expect(ended).toMatchObject({ callid: '31', trace_id: exported.traceId, span_id: exported.spanId });
}, 60_000);
