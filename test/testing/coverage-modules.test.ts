/**
 * `callscript test` with no path (docs/testing.md "Coverage"): it runs the scenario files of
 * the flows directory (not a `test/` folder of the project), and a module is covered by the
 * flows that enter it, merged with its own scenarios.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';

const dir = mkdtempSync(join(tmpdir(), 'cs-coverage-modules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'pin-check.yaml'),
  `version: 2
name: pin-check
module:
  params: { account: required }
  results: [verified, locked]
start: ask
steps:
  ask:
    read: { prompt: "Your PIN?", max_digits: 4 }
    on:
      "1234": done
      default: fail
  done: { return: verified }
  fail: { return: locked }
`,
);
writeFileSync(
  join(dir, 'main.yaml'),
  `version: 2
name: main
start: verify
steps:
  verify:
    subflow: { flow: pin-check, with: { account: "42" } }
    on: { verified: hello, locked: bye }
  hello: { say: "Hello.", next: bye }
  bye: { hangup: {} }
`,
);
// main covers the right PIN (pin-check's ask:1234 and done); the module's own scenario the wrong one
writeFileSync(
  join(dir, 'main.test.yaml'),
  `flow: main
cases:
  - name: the right PIN
    steps:
      - expect: read
        result: "1234"
      - expect: play
      - expect: hangup
`,
);
writeFileSync(
  join(dir, 'pin-check.test.yaml'),
  `flow: pin-check
cases:
  - name: a wrong PIN
    with: { account: "42" }
    steps:
      - expect: read
        result: "9999"
      - expect: { return: locked }
`,
);

async function run(paths: string[], flags: Record<string, string | boolean>) {
  let out = '';
  const code = await testCommand(paths, { flows: dir, ...flags }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('callscript test --coverage with no path', () => {
  it('runs the flows directory only, and counts what main covered of its module with its own scenarios', async () => {
    const r = await run([], { coverage: true, minCoverage: '100' });
    const at = (f: string) => relative(process.cwd(), join(dir, f));
    expect(r.out).toBe(
      `✓ ${at('main.test.yaml')} › the right PIN\n` +
        `✓ ${at('pin-check.test.yaml')} › a wrong PIN\n` +
        '\nCoverage:\n' +
        `  main (${join(dir, 'main.yaml')}): steps 83.3% (5/6), transitions 60% (3/5)\n` +
        '    step never run: pin-check:fail (' +
        `${join(dir, 'pin-check.yaml')}:14)\n` +
        `    transition never taken: verify:locked (${join(dir, 'main.yaml')}:7)\n` +
        `    transition never taken: pin-check:ask:default (${join(dir, 'pin-check.yaml')}:12)\n` +
        `  pin-check (${join(dir, 'pin-check.yaml')}): steps 100% (3/3), transitions 100% (4/4)\n` +
        'transition coverage 77.7% over 2 flows (main 60%, pin-check 100%) is under --min-coverage 100%\n' +
        '\n2 passed, 0 failed\n',
    );
    expect(r.code).toBe(1);
  });

  it("this repository's example flows pass at 100%, verify-customer covered through bank-line", async () => {
    let out = '';
    const code = await testCommand([], { coverage: true, minCoverage: '100' }, { write: (s: string) => (out += s) });
    expect(out).toContain(
      '  verify-customer (flows/verify-customer.yaml): steps 100% (7/7), transitions 100% (20/20)\n',
    );
    expect(out).not.toContain('invalid scenario file');
    expect(out).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(out).toContain('  call-centre (flows/call-centre.yaml): steps 100% (22/22), transitions 100% (51/51)\n');
    expect(out).not.toContain('is under --min-coverage');
    expect(code).toBe(0);
  }, 60_000);
});
