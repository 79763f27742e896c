/**
 * The queue step in the editor: completion offers its keys (the catalogue's params and its own: agents, hold,
 * announce, whisper), its strategies, its result keys under on:, the keys of announce:, the keys a queue step takes;
 * hover explains the queue and its keys, and a reference to the step shows its summary.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompletionList, Hover } from 'vscode-languageserver';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lspClient, type TestClient } from './client.js';
import { at, doc, edit } from './fixtures.js';

const FLOW = `version: 2
name: line
start: wait_line
steps:
  wait_line:
    queue:
      name: sales
      agents: ["+442079460001", "+442079460002"]
      strategy: round_robin
      announce: { every: 60, say: "You are number {{ vars.place.position }}." }
    save: place
    on:
      bridged: done
      timeout: bye
      empty: bye
  bye: { say: "Goodbye.", next: done }
  done: { hangup: {} }
`;

let dir: string;
let file: string;
let client: TestClient;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lsp-queue-'));
  file = join(dir, 'line.yaml');
  writeFileSync(file, FLOW);
  client = await lspClient(dir);
  client.open(file, FLOW);
});
afterEach(async () => {
  await client.request('textDocument/hover', doc(file, 0, 0));
  await client.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function complete(text: string): Promise<CompletionList | null> {
  const c = at(text);
  client.change(file, c.text);
  return client.request<CompletionList | null>('textDocument/completion', doc(file, c.line, c.character));
}
const labels = (l: CompletionList | null) => l?.items.map((i) => i.label);

async function hoverAt(text: string): Promise<string | undefined> {
  const c = at(text);
  client.change(file, c.text);
  const h = await client.request<Hover | null>('textDocument/hover', doc(file, c.line, c.character));
  return (h?.contents as { value?: string } | undefined)?.value;
}

describe('the queue step in the editor', () => {
  it("offers the queue's keys not yet given: the catalogue's with their bounds, its own with their doc", async () => {
    const list = await complete(edit(FLOW, '      strategy: round_robin\n', '      strategy: round_robin\n      ‸\n'));
    expect(labels(list)).toEqual([
      'ring_time',
      'wrap_up',
      'max_wait',
      'handle_time',
      'max_talk',
      'hold',
      'whisper',
      'cli',
    ]);
    const item = (k: string) => list!.items.find((i) => i.label === k)!;
    expect(item('ring_time')).toMatchObject({
      detail: 'integer 5..300, default 20',
      documentation: { kind: 'markdown', value: 'Seconds an agent rings before NOANSWER.' },
      textEdit: { newText: 'ring_time: ' },
    });
    expect(item('hold').detail).toBe(
      'Played in turn while the caller waits, looped: a media, { wait: seconds }, or a list of them.',
    );
    expect(item('whisper').detail).toBe('Media whispered to the agent who answers.');
  });

  it('offers the strategies as values of strategy:', async () => {
    const list = await complete(edit(FLOW, 'strategy: round_robin', 'strategy: ‸'));
    expect(list?.items.map((i) => `${i.label} (${i.detail})`)).toEqual([
      'in_order (queue strategy)',
      'round_robin (queue strategy)',
      'longest_idle (queue strategy)',
    ]);
  });

  it('offers the results of a queue under on:, not those already written', async () => {
    const list = await complete(edit(FLOW, '      empty: bye\n', '      ‸\n'));
    expect(list?.items.map((i) => `${i.label}: ${i.detail}`)).toEqual([
      'empty: no agent can take the call',
      'error: the store failed, or the agents did not render',
    ]);
  });

  it('offers the keys of announce:, and the keys that go with a queue step (no handlers, no valid)', async () => {
    const ann = await complete(
      edit(
        FLOW,
        '      announce: { every: 60, say: "You are number {{ vars.place.position }}." }',
        '      announce: { ‸ }',
      ),
    );
    expect(labels(ann)).toEqual(['every', 'say']);
    const step = await complete(edit(FLOW, '    save: place\n', '    ‸\n'));
    expect(labels(step)).toEqual(['save', 'next']);
  });

  it('hover: the queue key explains the step, its results and its keys; a param its bounds', async () => {
    const q = await hoverAt(edit(FLOW, '    queue:\n', '    qu‸eue:\n'));
    expect(q?.split('\n')[0]).toBe(
      '**queue** (effect): Version 2: waits in a line for the next free agent (hold media, announcements), rings ' +
        'them, and branches on bridged (the call with the agent ended), timeout (max_wait), empty (no agent can ' +
        'take the call), error. Result: bridged, timeout, empty.',
    );
    expect(q).toContain(
      '- `agents`: The agents: E.164 numbers (templates allowed), or { expr: CEL } giving a list of them.',
    );
    expect(q).toContain('- `max_wait`: integer 10..86400, default 900');
    const p = await hoverAt(edit(FLOW, '      strategy: round_robin', '      strat‸egy: round_robin'));
    expect(p).toBe(
      '**queue.strategy**: in_order | round_robin | longest_idle, default in_order\n\n' +
        'Which free agent rings: the first listed, the next after the last rung, or the one free longest.',
    );
  });

  it("hover on a reference to the step: its summary (the queue's first keys, branches, what it saves)", async () => {
    const text = edit(FLOW, 'start: wait_line', 'start: wait_l‸ine');
    expect(await hoverAt(text)).toBe(
      [
        '**step `wait_line`** (line 5): `queue` name: sales, agents: ["+442079460001", "+442079460002"], ' +
          'strategy: round_robin, announce: { every: 60, say: "You are number {{ vars.place.position }…" }',
        '',
        '- `bridged` → `done`',
        '- `timeout` → `bye`',
        '- `empty` → `bye`',
        '',
        'saves `vars.place`',
      ].join('\n'),
    );
  });

  it('hostile: a queue of 1,000 agents completes and hovers with its list cut', async () => {
    const many = JSON.stringify(Array.from({ length: 1000 }, (_, i) => `+4420794${String(i).padStart(5, '0')}`));
    const big = edit(FLOW, 'agents: ["+442079460001", "+442079460002"]', `agents: ${many}`);
    const list = await complete(edit(big, '      strategy: round_robin\n', '      strategy: round_robin\n      ‸\n'));
    expect(labels(list)).toContain('hold');
    const h = await hoverAt(edit(big, 'start: wait_line', 'start: wait_l‸ine'));
    expect(h?.split('\n')[0]).toBe(
      '**step `wait_line`** (line 5): `queue` name: sales, agents: ["+442079400000", "+442079400001", ' +
        '"+442079400002", "+442079400003", …], strategy: round_robin, announce: { every: 60, say: ' +
        '"You are number {{ vars.place.position }…" }',
    );
  });
});
