/**
 * Scenario files with mocked HTTP (mocks.http, expect: { http }): the lookup fixture's
 * cases through the test runner, the mock matching, and what a bad mock entry says.
 */
import { describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.js';
import { parseScenario } from '../../src/testing/index.js';
import { findMock, MockedLookup, urlMatches, type HttpMock } from '../../src/testing/http-mocks.js';

const DIR = 'test/fixtures/http-lookups';

describe('scenario files with mocks.http', () => {
  it('runs every result of the http step, fillers included, at 100% transition coverage', async () => {
    let out = '';
    const code = await testCommand(
      [`${DIR}/lookup.scenario.yaml`],
      { flows: DIR, coverage: true },
      { write: (s: string) => (out += s) },
    );
    expect(out).toContain('7 passed, 0 failed');
    expect(out).toContain('lookup (test/fixtures/http-lookups/lookup.yaml): steps 100% (6/6), transitions 100% (9/9)');
    expect(code).toBe(0);
  });

  it('reports a bad mock entry at its position', () => {
    const text = [
      'flow: lookup',
      'cases:',
      '  - name: x',
      '    mocks:',
      '      http:',
      '        - { url: "https://x/*", status: 700, erorr: NETWORK }',
      '    steps:',
      '      - expect: http',
      '',
    ].join('\n');
    expect(() => parseScenario(text, 's.yaml')).toThrow(
      /status is an HTTP status, 100 to 599[\s\S]*unknown key "erorr"/,
    );
  });

  it('an http step takes its outcome from mocks.http, not result:', () => {
    const text = [
      'flow: lookup',
      'cases:',
      '  - name: x',
      '    steps:',
      '      - expect: http',
      '        result: "200"',
      '',
    ].join('\n');
    expect(() => parseScenario(text, 's.yaml')).toThrow(
      /an http step takes its outcome from mocks\.http or its answer:, not `result:`/,
    );
  });
});

describe('mock matching', () => {
  const m = (o: Partial<HttpMock>): HttpMock => ({ url: '', status: 200, body: null, headers: {}, delay_ms: 0, ...o });
  it('matches exact URLs and * patterns, by method when given, first entry first', () => {
    expect(urlMatches('https://a/v1/*', 'https://a/v1/balance?x=1')).toBe(true);
    expect(urlMatches('https://a/*/balance', 'https://a/v1/balance')).toBe(true);
    expect(urlMatches('https://a/*/balance', 'https://a/v1/other')).toBe(false);
    expect(urlMatches('https://a/x', 'https://a/x?y')).toBe(false);
    expect(urlMatches('*a*a*a*a*a*b', 'a'.repeat(100000))).toBe(false); // linear
    const list = [m({ method: 'POST', url: 'https://a/*', status: 201 }), m({ url: 'https://a/*', status: 200 })];
    expect(findMock(list, 'GET', 'https://a/v')?.status).toBe(200);
    expect(findMock(list, 'POST', 'https://a/v')?.status).toBe(201);
    expect(findMock(list, 'GET', 'https://b/')).toBeUndefined();
  });
  it('spreads a delay over requests: pending while a filler can play, timeout past timeout_ms', () => {
    const l = new MockedLookup(m({ url: 'x', delay_ms: 5000 }), 8000);
    expect(l.next(3750, true)).toBe('pending');
    expect(l.next(3750, true)).toEqual({ ok: true, status: 200, body: null });
    expect(new MockedLookup(m({ url: 'x', delay_ms: 5000 }), 8000).next(3750, false)).toMatchObject({
      ok: false,
      error: 'TIMEOUT',
    });
    const slow = new MockedLookup(m({ url: 'x', delay_ms: 60000 }), 8000);
    expect([slow.next(3750, true), slow.next(3750, true), slow.next(3750, true)]).toEqual([
      'pending',
      'pending',
      expect.objectContaining({ error: 'TIMEOUT' }),
    ]);
    expect(new MockedLookup(undefined, 8000).next(3750, true)).toMatchObject({ ok: false, error: 'NETWORK' });
  });
});

describe('the graph of an http step', () => {
  it("has the step's keys as edges (ok, status codes, timeout, error, default), not its @wait state's", async () => {
    const { readFileSync } = await import('node:fs');
    const { checkFlow } = await import('../../src/flow/check.js');
    const { compileFlow } = await import('../../src/engine/compile.js');
    const { flowEdges } = await import('../../src/testing/transitions.js');
    const text = readFileSync(`${DIR}/lookup.yaml`, 'utf8');
    const flow = compileFlow(checkFlow(text, 'lookup.yaml').model!, text);
    const edges = flowEdges(flow).filter((e) => e.from.startsWith('lookup'));
    expect(edges.map((e) => `${e.from} ${e.key} -> ${e.to}`).sort()).toEqual([
      'lookup 404 -> not_found',
      'lookup default -> failed',
      'lookup error -> failed',
      'lookup ok -> found',
      'lookup timeout -> too_slow',
    ]);
    expect(Object.keys(flow.config.states)).toEqual(expect.arrayContaining(['lookup@filler', 'lookup@wait']));
  });
});
