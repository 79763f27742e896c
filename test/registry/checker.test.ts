import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { checkFlow, type CheckResult } from '../../src/flow/check.js';
import { WorkerChecker, spawnCheckWorker, type FlowFile } from '../../src/registry/checker.js';
import { bigFlow } from '../../bench/gen-flow.js';
import { V1 } from './fixtures.js';

const root = new URL('../..', import.meta.url).pathname;
const yamlIn = (dir: string) =>
  readdirSync(join(root, dir))
    .filter((n) => /\.ya?ml$/.test(n) && !/\.test\.ya?ml$/.test(n))
    .map((n) => ({ file: join(root, dir, n), text: readFileSync(join(root, dir, n), 'utf8') }));

/** The example flows, the HTTP fixtures (one broken), broken texts of each kind, and a big generated flow. */
const FILES: FlowFile[] = [
  ...yamlIn('flows'),
  ...yamlIn('test/fixtures/http-flows'),
  { file: '/flows/desk.yaml', text: V1 },
  { file: '/flows/unknown-step.yaml', text: V1.replace('next: end', 'next: nowhere') },
  { file: '/flows/syntax.yaml', text: 'version: 1\nsteps: [\n' },
  { file: '/flows/empty.yaml', text: '' },
  { file: '/flows/not a name.yaml', text: V1.replace('name: desk\n', '') },
  { file: '/flows/big.yaml', text: bigFlow(200) },
];

const inline = (files: readonly FlowFile[]) => files.map((f) => checkFlow(f.text, f.file));

/** A logger that keeps the warnings. */
function recorder() {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  return {
    warnings,
    log: { warn: (obj: object, msg: string) => void warnings.push({ obj: obj as Record<string, unknown>, msg }) },
  };
}

/** The fallback, counted: it must not run while the worker works. */
function countedFallback() {
  const calls: string[] = [];
  return { calls, check: (text: string, file: string): CheckResult => (calls.push(file), checkFlow(text, file)) };
}

const evalWorker = (code: string) => () => new Worker(code, { eval: true });

let checker: WorkerChecker | undefined;
afterEach(async () => {
  await checker?.close();
  checker = undefined;
});

describe('the flow model crosses threads', () => {
  it('is plain data: structured clone gives an equal model, made only of plain objects, arrays and primitives', () => {
    const models = inline(FILES).flatMap((r) => (r.model ? [r.model] : []));
    expect(models.length).toBeGreaterThanOrEqual(8);
    const foreign: string[] = [];
    const walk = (v: unknown, path: string) => {
      if (typeof v === 'function' || typeof v === 'symbol') foreign.push(`${path}: ${typeof v}`);
      if (v === null || typeof v !== 'object') return;
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== Array.prototype)
        foreign.push(`${path}: ${String(proto?.constructor?.name)}`);
      for (const k of Reflect.ownKeys(v)) walk((v as Record<PropertyKey, unknown>)[k], `${path}.${String(k)}`);
    };
    for (const m of models) {
      walk(m, m.name);
      expect(structuredClone(m)).toStrictEqual(m);
    }
    expect(foreign).toEqual([]);
  });
});

describe('WorkerChecker', () => {
  it('checks in a worker thread with exactly the results of the main thread (diagnostics and models)', async () => {
    const fallback = countedFallback();
    const { warnings, log } = recorder();
    checker = new WorkerChecker({ check: fallback.check });
    const results = await checker.check(FILES, log);
    expect(warnings).toEqual([]);
    expect(fallback.calls).toEqual([]);
    expect(results).toStrictEqual(inline(FILES));
    expect(FILES.filter((_, i) => results[i]!.model === undefined).map((f) => basename(f.file))).toEqual([
      'broken.yaml',
      'unknown-step.yaml',
      'syntax.yaml',
      'empty.yaml',
      'not a name.yaml',
    ]);
  });

  it('reuses one worker across checks', async () => {
    let spawned = 0;
    const { warnings, log } = recorder();
    checker = new WorkerChecker({ spawn: () => (spawned++, spawnCheckWorker()) });
    const a = await checker.check(FILES.slice(0, 2), log);
    const b = await checker.check(FILES.slice(2, 4), log);
    expect([...a, ...b]).toStrictEqual(inline(FILES.slice(0, 4)));
    expect(await checker.check([], log)).toEqual([]);
    expect(spawned).toBe(1);
    expect(warnings).toEqual([]);
  });

  it(
    'falls back to the main thread with a warning when the ' + 'worker crashes, and starts a new one next time',
    async () => {
      let spawned = 0;
      const fallback = countedFallback();
      const { warnings, log } = recorder();
      const crash = evalWorker(`require('node:worker_threads').parentPort.on('message', () => process.exit(3));`);
      checker = new WorkerChecker({ check: fallback.check, spawn: () => (spawned++, crash()) });
      const files = FILES.slice(-4);
      expect(await checker.check(files, log)).toStrictEqual(inline(files));
      expect(fallback.calls).toEqual(files.map((f) => f.file));
      expect(warnings).toEqual([
        {
          obj: { code: 'CHECK_WORKER_FAILED', err: 'the worker exited with code 3', files: 4 },
          msg: expect.stringContaining('checking 4 files on the main thread instead'),
        },
      ]);
      expect(await checker.check(files.slice(0, 1), log)).toStrictEqual(inline(files.slice(0, 1)));
      expect(spawned).toBe(2);
      expect(warnings.length).toBe(2);
    },
  );

  it('falls back when the worker throws while starting', async () => {
    const { warnings, log } = recorder();
    checker = new WorkerChecker({ spawn: evalWorker(`throw new Error('cannot start');`) });
    expect(await checker.check(FILES.slice(0, 1), log)).toStrictEqual(inline(FILES.slice(0, 1)));
    expect(warnings.map((w) => w.obj)).toEqual([{ code: 'CHECK_WORKER_FAILED', err: 'cannot start', files: 1 }]);
  });

  it('falls back when the worker answers nonsense', async () => {
    const { warnings, log } = recorder();
    checker = new WorkerChecker({
      spawn: evalWorker(
        `const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => ` +
          `parentPort.postMessage({ id: m.id, result: 42 }));`,
      ),
    });
    expect(await checker.check(FILES.slice(0, 2), log)).toStrictEqual(inline(FILES.slice(0, 2)));
    expect(warnings.map((w) => w.obj)).toEqual([
      { code: 'CHECK_WORKER_FAILED', err: 'the worker answered something unexpected', files: 2 },
    ]);
  });

  it(
    'does not fall back when the worker hangs: stopped after timeoutMs, the files refused (CHECK_TIMEOUT), ' +
      'nothing checked on the main thread',
    async () => {
      const { warnings, log } = recorder();
      const hang = evalWorker(`require('node:worker_threads').parentPort.on('message', () => { for (;;) {} });`);
      let mainThread = 0;
      checker = new WorkerChecker({ timeoutMs: 300, spawn: hang, check: () => (mainThread++, { diagnostics: [] }) });
      const results = await checker.check(FILES.slice(0, 3), log);
      expect(results.map((r) => r.diagnostics.map((d) => `${d.code} ${d.file} ${d.message}`))).toEqual(
        FILES.slice(0, 3).map((f) => [
          `CHECK_TIMEOUT ${f.file} checking this file took over 300 ms: it is refused (its previous version, ` +
            `if any, still serves)`,
        ]),
      );
      expect(mainThread).toBe(0);
      expect(warnings.map((w) => w.obj)).toEqual([{ code: 'CHECK_TIMEOUT', err: 'no answer for 300 ms', files: 3 }]);
    },
  );

  it('once closed, checks on the main thread without a warning', async () => {
    const { warnings, log } = recorder();
    checker = new WorkerChecker();
    await checker.check(FILES.slice(0, 1), log);
    await checker.close();
    expect(await checker.check(FILES.slice(0, 2), log)).toStrictEqual(inline(FILES.slice(0, 2)));
    expect(warnings).toEqual([]);
  });
});
