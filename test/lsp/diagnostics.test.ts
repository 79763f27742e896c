import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestClient } from './client.js';
import { workspace, type Workspace } from './workspace-fixture.js';

const FLOW = `version: 1
start: welcome
steps:
  welcome:
    say: "Hello."
    next: menu
  menu:
    read: { prompt: "Press 1.", max_digits: 1 }
    on: { "1": goodbye, TIMEOUT: goodbye, default: goodbye }
  goodbye:
    hangup: {}
`;

let ws: Workspace;
let dir: string;
let client: TestClient;
beforeEach(async () => {
  ws = await workspace({});
  ({ dir, client } = ws);
});
afterEach(() => ws.dispose());

describe('diagnostics', () => {
  it('publishes a missing step target at its line and column, with its hint', async () => {
    const file = join(dir, 'hello.yaml');
    writeFileSync(file, FLOW);
    client.open(file, FLOW.replace('next: menu', 'next: mnu'));
    const [d, ...rest] = await client.diagnostics(file, (d) => d.length > 0);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      code: 'UNKNOWN_STEP',
      severity: 1,
      source: 'callscript',
      range: { start: { line: 5, character: 10 }, end: { line: 5, character: 13 } },
    });
    expect(d!.message).toContain("did you mean 'menu'?");
  });

  it('clears them once the change fixes the flow', async () => {
    const file = join(dir, 'hello.yaml');
    client.open(file, FLOW.replace('next: menu', 'next: mnu'));
    await client.diagnostics(file, (d) => d.length === 1);
    client.change(file, FLOW);
    expect(await client.diagnostics(file, (d) => d.length === 0)).toEqual([]);
  });
});
