/**
 * The incremental loader against the whole load on random flow-shaped YAML (test/helpers/yaml-gen.ts) and after
 * sequences of random edits with one cache (the way an editor uses it): the results are deep-equal every time.
 * Seeded: every run tries the same texts. The generated texts all load by blocks; of the edited ones, those the
 * edits leave without a YAML error mostly do (an edit that breaks the YAML makes the whole load decide).
 */
import { describe, expect, it } from 'vitest';
import { checkFlow } from '../../src/flow/check.js';
import { YamlCache, loadYamlCached } from '../../src/flow/yaml-cache.js';
import { loadYaml, type LoadResult } from '../../src/flow/yaml.js';
import { bigFlow } from '../helpers/big-flow.js';
import { rng } from '../helpers/random.js';
import { editText, genFlowYaml } from '../helpers/yaml-gen.js';

/** Loads with the cache, compares with the whole load; whether it went by blocks, and the result. */
function same(text: string, cache: YamlCache, note: string): { fast: boolean; result: LoadResult } {
  const whole = cache.stats.whole;
  const result = loadYaml(text, 'f.yaml');
  expect(loadYamlCached(text, 'f.yaml', cache), `${note}: ${JSON.stringify(text)}`).toStrictEqual(result);
  return { fast: cache.stats.whole === whole, result };
}

describe('random flows', () => {
  it('300 generated flows: the same, each by blocks (with a fresh cache and with one shared)', () => {
    const shared = new YamlCache();
    for (let seed = 1; seed <= 300; seed++) {
      const text = genFlowYaml(seed);
      expect(same(text, new YamlCache(), `seed ${seed}`).fast).toBe(true);
      expect(same(text, shared, `seed ${seed}, shared`).fast).toBe(true);
    }
  });

  it('60 sequences of 20 edits with one cache: the same after every edit', { timeout: 60_000 }, () => {
    let byBlocks = 0;
    let clean = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed * 31);
      const cache = new YamlCache(seed % 5 === 0 ? 8 : undefined);
      let text = genFlowYaml(seed);
      let good = text;
      for (let k = 0; k < 20; k++) {
        // mostly from the last text without a YAML error: an editor's text is broken for a moment, then mended
        text = editText(r, r() < 0.7 ? good : text);
        const { fast, result } = same(text, cache, `seed ${seed}, edit ${k}`);
        if (!result.diagnostics.some((d) => d.code === 'YAML_SYNTAX')) {
          good = text;
          clean++;
          if (fast) byBlocks++;
        }
      }
    }
    expect(clean).toBeGreaterThan(600);
    expect(byBlocks / clean).toBeGreaterThan(0.6);
  });

  it('edits of a 100-step flow: the same check results', { timeout: 60_000 }, () => {
    const r = rng(7);
    const cache = new YamlCache();
    let text = bigFlow(100);
    for (let k = 0; k < 20; k++) {
      text = editText(r, text);
      expect(checkFlow(text, 'big.yaml', { yamlCache: cache, symbols: true })).toStrictEqual(
        checkFlow(text, 'big.yaml', { symbols: true }),
      );
    }
  });
});
