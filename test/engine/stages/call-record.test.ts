/** The call's stored record (src/engine/call-record.ts): read once, written with real fields. */
import { describe, expect, it } from 'vitest';
import {
  claimRecord,
  decodeState,
  encodeRecord,
  ENDED,
  memoOf,
  readRecord,
  RecordSeal,
} from '../../../src/engine/call-record.js';
import type { CallState } from '../../../src/engine/types.js';

const state: CallState = {
  v: 2,
  flow: 'desk',
  version: 'abc',
  s: 'menu',
  step: 'menu',
  vars: { n: 1 },
  commandId: 2,
  reply: '{"command":"read","command_id":2,"params":{}',
  started: 1000,
  commands: 2,
};
const lk = { id: 'L1', step: 'lookup', started: 5000, until: 9000 };

describe('readRecord', () => {
  it('tells every kind of stored value apart, with one parse', () => {
    expect(readRecord(undefined)).toEqual({ kind: 'none' });
    expect(readRecord(ENDED)).toEqual({ kind: 'ended' });
    expect(readRecord('{not json')).toEqual({ kind: 'unreadable' });
    expect(readRecord('{"v":1,"flow":"x"}')).toEqual({ kind: 'unreadable' });
    expect(readRecord('[1,2]')).toEqual({ kind: 'unreadable' });
    expect(readRecord('null')).toEqual({ kind: 'unreadable' });
    expect(readRecord(JSON.stringify(state))).toEqual({ kind: 'live', state });
    const claim = { req: '2:read:UP', until: 7000 };
    expect(readRecord(claimRecord(undefined, claim))).toEqual({ kind: 'claimed', claim });
    expect(readRecord(claimRecord(state, claim))).toEqual({ kind: 'claimed', claim, state: { ...state, claim } });
    // a claim without its time limit is no claim
    expect(readRecord(JSON.stringify({ ...state, claim: { req: 'x' } })).kind).toBe('live');
  });

  it('decodeState: the state of a live or claimed call, nothing else', () => {
    expect(decodeState(JSON.stringify(state))).toEqual(state);
    expect(decodeState(ENDED)).toBeUndefined();
    expect(decodeState(claimRecord(undefined, { req: 'x', until: 1 }))).toBeUndefined();
  });
});

describe('encodeRecord', () => {
  const json = JSON.stringify(state);

  it("stores the engine's own serialisation as it is when there is no memo to add", () => {
    expect(encodeRecord(state, json, {})).toBe(json);
    expect(encodeRecord(state, json, { hn: 0 })).toBe(json);
  });

  it('adds the effect memo as fields, in one stringify', () => {
    const out = encodeRecord(state, json, { hn: 2, lk });
    expect(out).toBe(`${json.slice(0, -1)},"hn":2,"lk":${JSON.stringify(lk)}}`);
    expect(memoOf(readRecord(out).kind === 'live' ? decodeState(out) : undefined)).toEqual({ hn: 2, lk });
  });

  it('serialises a sealed state (no json of its own) whole', () => {
    expect(JSON.parse(encodeRecord(state, undefined, {}))).toEqual(state);
  });
});

describe('RecordSeal', () => {
  it('without a key: stores as it is; a sealed state opens to *** with the problem said', () => {
    const seal = new RecordSeal(undefined);
    expect(seal.open(state, '1')).toEqual({ state });
    const opened = seal.open({ ...state, x: 'sealed-text' }, '1');
    expect(opened.state.x).toBeUndefined();
    expect(opened.problem).toMatch(/no key is configured/);
  });
});
