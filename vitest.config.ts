import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that start processes of their own (`callscript serve`, workers, the emulator,
 * npm, redis-server, Neovim and its `callscript lsp`), drive Chromium, or stop and freeze
 * processes on purpose (PROCESSES).
 * They run one file at a time, after the others, so that no other test competes with them
 * for the CPU while they count on a peer answering within a second. Every other file is
 * in-process (plain functions, `fastify.inject`, servers on loopback in the test's own
 * process) and runs two at a time: with the default (one fewer worker than CPUs) a 2-core
 * machine ran the whole suite in a single worker. A file of test/cli/ that calls the CLI's
 * functions without starting a process is in-process.
 *
 * Between the two, two at a time, the files whose processes count on no timing (UNTIMED: they
 * wait for what they expect, with generous bounds): the builds (playing the Dockerfile,
 * installing the packed package: npm and tsc, a minute of CPU), kill -9 and restart, the
 * CLI's output.
 *
 * `isolate: false` (but for the few heavy UNTIMED files): a worker runs its files one after
 * the other in one process, the modules they share loaded once (a fresh process per file cost
 * up to a second of CPU each: the in-process files took 40% less CPU without). The sources
 * keep no module-level mutable state (DESIGN.md), and a test that changes the process
 * (process.env, fake timers) puts it back.
 */
const UNTIMED = [
  'test/deploy/dockerfile.test.ts',
  'test/deploy/install.test.ts',
  'test/emulator/durability.test.ts',
  'test/emulator/cli.test.ts',
  'test/emulator/flows.e2e.test.ts',
  'test/emulator/webhooks.e2e.test.ts',
  'test/cli/calls.test.ts',
  'test/cli/commands.test.ts',
  'test/cli/otel-import.test.ts',
  'test/http/console-dist.test.ts',
];
const PROCESSES = [
  'test/faults/**/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/cli/connections.test.ts',
  'test/cli/metrics-workers.test.ts',
  'test/cli/sighup.test.ts',
  'test/cli/workers.test.ts',
  'test/**/*e2e*.test.ts',
  'test/http/console-browser.test.ts',
  'test/http/layouts.test.ts',
  'test/lsp/neovim.test.ts',
  'test/registry/checker.test.ts',
  'test/registry/incremental.test.ts',
  'test/registry/settle.test.ts',
  'test/service/dial-cli.test.ts',
  'test/testing/simulate.test.ts',
];

/**
 * The files that take longest, started first in their group: with no timings cached (a fresh
 * clone, as CI runs) vitest starts the biggest files first, and a long small one could end
 * its group alone, the other worker idle.
 */
const LONGEST = [
  'test/deploy/dockerfile.test.ts',
  'test/deploy/install.test.ts',
  'test/emulator/durability.test.ts',
  'test/flow/big-flow.test.ts',
  'test/flow/robustness.test.ts',
  'test/http/http-step.test.ts',
  'test/campaign/rows.test.ts',
  'test/testing/paths.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((p) => f.moduleId.endsWith(p));
      return i === -1 ? LONGEST.length : i;
    };
    // a stable sort: these first, the others in vitest's order (the groups still run by groupOrder)
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 20000,
    sequence: { sequencer: LongestFirst },
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: [...PROCESSES, ...UNTIMED],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'untimed', include: UNTIMED, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: PROCESSES,
          exclude: UNTIMED,
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
