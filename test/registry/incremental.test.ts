import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Registry } from '../../src/registry/registry.js';
import { LiveCalls } from '../../src/registry/live.js';
import { Reloader } from '../../src/registry/reloader.js';
import { WorkerChecker, inlineChecker, type FlowChecker, type FlowFile } from '../../src/registry/checker.js';
import { checkFlow } from '../../src/flow/check.js';
import { V1, V2 } from './fixtures.js';

const DESK = '/flows/desk.yaml';
const OTHER = '/flows/other.yaml';
const OTHER_TEXT = V1.replace('name: desk', 'name: other');
const BROKEN = V1.replace('next: end', 'next: nowhere');

/** A registry whose main-thread checker counts the files it checks. */
function counting() {
  const checked: string[] = [];
  const registry = new Registry({ check: (text, file) => (checked.push(file), checkFlow(text, file)) });
  return { registry, checked };
}

/** An inline FlowChecker that records each batch. */
function recordingChecker(): FlowChecker & { batches: string[][] } {
  const inner = inlineChecker();
  const batches: string[][] = [];
  return {
    batches,
    check: (files: readonly FlowFile[], log) => (batches.push(files.map((f) => f.file)), inner.check(files, log)),
    close: () => inner.close(),
  };
}

const quiet = { warn: () => {} };

describe('incremental reload', () => {
  it('neither checks nor compiles a file whose content did not change: its CompiledFlow stays the same object', () => {
    const { registry: r, checked } = counting();
    r.reload([
      { file: DESK, text: V1 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    const desk = r.current('desk')!;
    const other = r.current('other')!;
    expect(checked).toEqual([DESK, OTHER]);
    const same = r.reload([
      { file: DESK, text: V1 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    expect(checked).toEqual([DESK, OTHER]);
    expect(same).toMatchObject({ checked: [], published: [], unchanged: ['desk', 'other'], refused: [] });
    expect(r.current('desk')).toBe(desk);
    const edit = r.reload([
      { file: DESK, text: V2 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    expect(checked).toEqual([DESK, OTHER, DESK]);
    expect(edit.checked).toEqual([DESK]);
    expect(edit.published.map((p) => p.name)).toEqual(['desk']);
    expect(r.current('other')).toBe(other);
    expect(r.current('desk')).not.toBe(desk);
  });

  it('keeps an unchanged broken file refused with the same pending errors, without checking it again', () => {
    const { registry: r, checked } = counting();
    r.reload([{ file: DESK, text: V1 }]);
    const v1 = r.current('desk')!;
    const first = r.reload([{ file: DESK, text: BROKEN }]);
    const pending = r.pendingErrors().get(DESK);
    expect(pending!.map((d) => [d.code, d.line, d.column])).toEqual([['UNKNOWN_STEP', 19, 11]]);
    const again = r.reload([{ file: DESK, text: BROKEN }]);
    expect(checked).toEqual([DESK, DESK]);
    expect(again).toMatchObject({ refused: [DESK], kept: ['desk'], checked: [], diagnostics: first.diagnostics });
    expect(r.pendingErrors().get(DESK)).toEqual(pending);
    expect(r.current('desk')).toBe(v1);
  });

  it('admits a file refused for a taken name once the name is free, without checking it again', () => {
    const { registry: r, checked } = counting();
    const twin = '/flows/twin.yaml';
    const first = r.reload([
      { file: DESK, text: V1 },
      { file: twin, text: V2 },
    ]);
    expect(first.refused).toEqual([twin]);
    expect(first.diagnostics.map((d) => [d.code, d.file, d.line, d.column])).toEqual([
      ['DUPLICATE_FLOW_NAME', twin, 2, 7],
    ]); // at `name: desk` (line 2 of the fixture), not 1:1
    expect(first.diagnostics[0]!.message).toBe(
      'flow name "desk" is already used by desk.yaml, which keeps it: it was admitted first (a file already ' +
        'serving a flow comes first, then files in name order)',
    );
    const second = r.reload([{ file: twin, text: V2 }]);
    expect(checked).toEqual([DESK, twin]);
    expect(second).toMatchObject({ refused: [], checked: [] });
    expect(second.published.map((p) => p.name)).toEqual(['desk']);
    expect(r.entry('desk')!.file).toBe(twin);
  });

  it('checks the same text again under another file name (the name and positions come from the file)', () => {
    const { registry: r, checked } = counting();
    r.reload([{ file: DESK, text: V1 }]);
    const moved = r.reload([{ file: '/flows/desk-moved.yaml', text: V1 }]);
    expect(checked).toEqual([DESK, '/flows/desk-moved.yaml']);
    expect(moved).toMatchObject({ unchanged: ['desk'], published: [], deleted: [] });
    expect(r.entry('desk')!.file).toBe('/flows/desk-moved.yaml');
  });

  it('reloadAsync sends only the changed files to its checker, and ends like reload', async () => {
    const a = new Registry({ now: () => 1000 });
    const b = new Registry({ now: () => 1000 });
    const checker = recordingChecker();
    const step = async (files: FlowFile[]) => {
      const { timings: tx, ...x } = a.reload(files);
      const { timings: ty, ...y } = await b.reloadAsync(files, new LiveCalls(60_000), { checker, log: quiet });
      expect(y).toEqual(x);
      expect(Object.keys(ty)).toEqual(Object.keys(tx));
      expect([...b.pendingErrors()]).toEqual([...a.pendingErrors()]);
      expect(b.list()).toEqual(a.list());
      return y;
    };
    await step([
      { file: DESK, text: V1 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    const other = b.current('other')!;
    await step([
      { file: DESK, text: V1 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    await step([
      { file: DESK, text: BROKEN },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    await step([
      { file: DESK, text: V2 },
      { file: OTHER, text: OTHER_TEXT },
    ]);
    expect(b.current('other')).toBe(other);
    await step([{ file: DESK, text: V2 }]);
    expect(checker.batches).toEqual([[DESK, OTHER], [], [DESK], [DESK], []]);
  });
});

describe('Reloader with its checker worker', () => {
  let dir: string | undefined;
  let reloader: Reloader | undefined;
  afterEach(async () => {
    await reloader?.close();
    reloader = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const logger = () => {
    const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const at = (level: string) => (obj: object, msg: string) =>
      void lines.push({ level, obj: obj as Record<string, unknown>, msg });
    return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
  };

  async function setup(checker?: FlowChecker) {
    dir = mkdtempSync(join(tmpdir(), 'callscript-incremental-'));
    writeFileSync(join(dir, 'desk.yaml'), V1);
    writeFileSync(join(dir, 'other.yaml'), OTHER_TEXT);
    const { registry } = await Registry.fromDirectory(dir);
    // a file is written, then reloaded at once: the settle window (test/registry/settle.test.ts) is not waited for
    reloader = new Reloader(registry, dir, new LiveCalls(60_000), { settleMs: 0, ...(checker ? { checker } : {}) });
    return { registry, dir };
  }

  it('publishes an edit checked on the worker thread, with no warning', async () => {
    const { registry, dir } = await setup();
    const other = registry.current('other')!;
    writeFileSync(join(dir, 'desk.yaml'), V2);
    const { lines, log } = logger();
    const r = await reloader!.reload('test', log);
    expect(r.published.map((p) => p.name)).toEqual(['desk']);
    expect(r.unchanged).toEqual(['other']);
    expect(registry.current('other')).toBe(other);
    expect(lines.filter((l) => l.level !== 'info')).toEqual([]);
    const timing = lines.find((l) => 'checked' in l.obj)!;
    expect(timing.obj).toEqual({
      reason: 'test',
      checked: ['desk.yaml'],
      checkMs: expect.any(Number),
      compileMs: expect.any(Number),
      applyMs: expect.any(Number),
    });
    expect(timing.msg).toMatch(
      /^reload \(test\): 1 changed file checked in [\d.]+ ms; on the main thread, compiled in [\d.]+ ms and applied in [\d.]+ ms$/,
    );
    // Nothing changed: nothing checked, no timing line.
    lines.length = 0;
    expect((await reloader!.reload('test', log)).unchanged).toEqual(['desk', 'other']);
    expect(lines.filter((l) => 'checked' in l.obj)).toEqual([]);
  });

  it(
    'a refused edit of a served flow keeps its previous version; a new file with errors is not served: each ' +
      'log line says which',
    async () => {
      const { dir } = await setup();
      writeFileSync(join(dir, 'desk.yaml'), BROKEN);
      writeFileSync(join(dir, 'new.yaml'), BROKEN.replace(/^name: desk$/m, 'name: fresh'));
      const { lines, log } = logger();
      const r = await reloader!.reload('test', log);
      expect(r.refused.map((x) => x.file).sort()).toEqual(['desk.yaml', 'new.yaml']);
      const said = lines
        .filter((l) => l.level === 'error')
        .map((l) => [
          l.obj.file,
          l.msg.slice(l.msg.lastIndexOf(' (edit refused') + 1 || l.msg.lastIndexOf(' (file refused') + 1),
        ]);
      expect(said.sort()).toEqual([
        ['desk.yaml', '(edit refused: the previous version keeps serving)'],
        ['new.yaml', '(file refused: not served until fixed (no version of it was loaded))'],
      ]);
    },
  );

  it('falls back to checking on the main thread when the worker crashes: same outcome, one warning', async () => {
    const crash = () =>
      new Worker(`require('node:worker_threads').parentPort.on('message', () => process.exit(7));`, { eval: true });
    const { registry, dir } = await setup(new WorkerChecker({ spawn: crash }));
    writeFileSync(join(dir, 'desk.yaml'), BROKEN);
    writeFileSync(join(dir, 'other.yaml'), OTHER_TEXT.replace('Goodbye.', 'Bye.'));
    const { lines, log } = logger();
    const r = await reloader!.reload('test', log);
    expect(r.published.map((p) => p.name)).toEqual(['other']);
    expect(r.refused).toEqual([
      {
        file: 'desk.yaml',
        diagnostics: [expect.objectContaining({ code: 'UNKNOWN_STEP', file: 'desk.yaml', line: 19, column: 11 })],
      },
    ]);
    expect(r.kept).toEqual(['desk']);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        obj: { code: 'CHECK_WORKER_FAILED', err: 'the worker exited with code 7', files: 2 },
        msg: expect.stringContaining('on the main thread instead'),
      },
    ]);
    expect(
      registry
        .pendingErrors()
        .get(join(dir, 'desk.yaml'))!
        .map((d) => d.code),
    ).toEqual(['UNKNOWN_STEP']);
  });
});
