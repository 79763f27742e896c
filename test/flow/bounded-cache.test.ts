import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/flow/bounded-cache.js';
import { checkTemplate, render } from '../../src/flow/expr.js';

describe('the parse caches are bounded (a reload brings new texts for ever)', () => {
  it('keeps at most maxChars of keys, dropping the oldest first', () => {
    const c = new BoundedCache<number>(10);
    c.set('aaaa', 1);
    c.set('bbbb', 2);
    c.set('cccc', 3); // 12 characters: 'aaaa' goes
    expect([c.get('aaaa'), c.get('bbbb'), c.get('cccc'), c.size]).toEqual([undefined, 2, 3, 2]);
    c.set('x'.repeat(50), 4); // one entry over the bound is kept alone
    expect([c.get('bbbb'), c.size]).toEqual([undefined, 1]);
  });

  it('templates parsed and evicted by many others still render (parsed again)', () => {
    const first = 'Hi {{ vars.n | plus: 1 }}';
    const scope = { vars: { n: 1 }, call: {}, result: '', error: '' };
    expect(render(first, scope)).toBe('Hi 2');
    const filler = '{{ vars.n | plus: 0 }}'.padEnd(60_000, ' ');
    for (let i = 0; i < 200; i++) expect(checkTemplate(filler + i)).toBeNull(); // 12 M characters: the first is evicted
    expect(render(first, scope)).toBe('Hi 2');
  });
});
