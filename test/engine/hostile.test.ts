/**
 * The hostile flow corpus (test/fixtures/hostile/): each attack is refused at load with its
 * diagnostic, or runs to its bounded outcome. Every run is also bounded in CPU here, with
 * a generous ceiling (shared machines): before the bounds, these took 14 s to minutes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { compileFlow } from '../../src/engine/compile.js';
import { HOSTILE } from '../fixtures/hostile/cases.js';
import { Call } from './helpers.js';

const dir = new URL('../fixtures/hostile/', import.meta.url).pathname;

describe('the hostile flow corpus', () => {
  it('covers every file of the folder', async () => {
    const { readdirSync } = await import('node:fs');
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .sort(),
    ).toEqual(HOSTILE.map((c) => c.file).sort());
  });

  for (const c of HOSTILE) {
    it(`${c.file}: ${c.refused ? `refused, ${c.refused.code}` : `runs, ${c.logs ?? 'no bound hit'}`}`, () => {
      const text = readFileSync(join(dir, c.file), 'utf8');
      const c0 = process.cpuUsage();
      const { model, diagnostics } = checkFlow(text, c.file);
      if (c.refused) {
        expect(diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}@${d.line}:${d.column}`)).toEqual(
          [`${c.refused.code}@${c.refused.line}:${c.refused.column}`],
        );
        expect(model).toBeUndefined();
      } else {
        expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        const call = new Call(compileFlow(model!, text));
        call.start();
        const codes = () => (call.last?.kind === 'reply' ? (call.last.log ?? []).map((l) => l.code) : []);
        for (const r of c.results ?? []) {
          if (c.logs && codes().includes(c.logs)) break;
          call.result(r);
        }
        if (c.logs) expect(codes()).toContain(c.logs);
        else expect(codes()).toEqual([]);
        expect(call.last?.kind === 'reply' && call.last.reply.command).toBe(c.last);
      }
      const cpu = process.cpuUsage(c0);
      expect((cpu.user + cpu.system) / 1000).toBeLessThan(5_000);
    });
  }
});
