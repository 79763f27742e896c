/** The agents table over the control API: PUT, DELETE, GET with states and counters, reset; exact JSON. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_LIMITS, type AgentBehaviour } from '../../src/emulator/agents/behaviour.js';
import { createEmulator } from '../../src/emulator/server.js';
import { cmd, fakeServer, startEmulator, type Running } from './helpers.js';

const X = '+447700900001';
const Y = '+447700900002';

let e: Running;
beforeAll(async () => {
  e = await startEmulator();
});
afterAll(async () => e.close());
beforeEach(async () => {
  expect((await e.req('/emulator/reset', { method: 'POST' })).status).toBe(200);
});

const put = (number: string, body?: unknown) =>
  e.req(`/emulator/agents/${encodeURIComponent(number)}`, { method: 'PUT', ...(body !== undefined ? { body } : {}) });
const badRequest = (message: string) => ({ error: { code: 'BAD_REQUEST', message } });

describe('PUT /emulator/agents/<number>', () => {
  it('adds an agent: the defaults (answers after 3 s, talks 60 s), or the fields given; answer: false', async () => {
    const a = await put(X, {});
    expect(a.status).toBe(200);
    expect(a.json).toEqual({
      number: X,
      answer: true,
      answer_after: 3,
      talk: 60,
      state: 'free',
      rung: 0,
      answered: 0,
      missed: 0,
      overlaps: 0,
    });
    expect((await put(Y, { answer: false })).json).toEqual({
      number: Y,
      answer: false,
      state: 'free',
      rung: 0,
      answered: 0,
      missed: 0,
      overlaps: 0,
    });
    expect((await put('+447700900003', { answer_after: 0.5, talk: 86400, answer: true })).json).toMatchObject({
      answer_after: 0.5,
      talk: 86400,
    });
    expect((await e.req(`/emulator/agents/${X}`, { method: 'PUT' })).json).toMatchObject({ number: X });
    expect((await e.req('/emulator/agents')).json.map((v: { number: string }) => v.number)).toEqual([
      X,
      Y,
      '+447700900003',
    ]);
  });

  it("changes an agent's behaviour and keeps its counters", async () => {
    await put(X, { answer_after: 1, talk: 5 });
    const s = await fakeServer((r) =>
      r.json.command === ''
        ? { body: cmd('dialout', 1, { targets: [{ number: X, timeout: 20 }] }) }
        : { body: cmd('hangup', 2) },
    );
    try {
      await e.call({ url: s.url });
    } finally {
      await s.close();
    }
    expect((await put(X, { answer: false })).json).toEqual({
      number: X,
      answer: false,
      state: 'free',
      rung: 1,
      answered: 1,
      missed: 0,
      overlaps: 0,
    });
  });

  it.each([
    ['0123', {}, badRequest('0123: an E.164 number is "+" then 2 to 15 digits, the first not 0 (e.g. +33123456789)')],
    ['+999', {}, badRequest('+999: not a possible phone number for its country code')],
    [
      X,
      { answer_after: 301 },
      badRequest('answer_after is the seconds the agent rings before it answers: a number from 0 to 300, got 301'),
    ],
    [
      X,
      { answer_after: -1, talk: 0.5 },
      badRequest(
        'answer_after is the seconds the agent rings before it answers: a number from 0 to 300, got -1; ' +
          'talk is the seconds the agent talks once bridged: a number from 1 to 86400, got 0.5',
      ),
    ],
    [
      X,
      { talk: 86401 },
      badRequest('talk is the seconds the agent talks once bridged: a number from 1 to 86400, got 86401'),
    ],
    [
      X,
      { talk: '60' },
      badRequest('talk is the seconds the agent talks once bridged: a number from 1 to 86400, got "60"'),
    ],
    [
      X,
      { answer_after: null },
      badRequest('answer_after is the seconds the agent rings before it answers: a number from 0 to 300, got null'),
    ],
    [
      X,
      { answer: 'no' },
      badRequest('answer is false for an agent that never answers (true, the default, answers), got "no"'),
    ],
    [X, { answer: false, talk: 5 }, badRequest(`talk does not apply: agent ${X} never answers (answer: false)`)],
    [
      X,
      { anwser_after: 3 },
      badRequest(
        `unknown key anwser_after in agent ${X} (did you mean answer_after?); the keys are answer_after, talk, answer`,
      ),
    ],
    [
      X,
      [1],
      badRequest('the body is an agent: {"answer_after": 3, "talk": 60} or {"answer": false} ({} for the defaults)'),
    ],
  ])('refuses %s %j: 400 with what is wrong, and changes nothing', async (number, body, answer) => {
    const r = await put(number, body);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(answer);
    expect((await e.req('/emulator/agents')).json).toEqual([]);
  });

  it('a body that is not JSON; no credentials', async () => {
    const r = await e.req(`/emulator/agents/${X}`, {
      method: 'PUT',
      raw: '{answer',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('BAD_REQUEST');
    const anon = await e.req('/emulator/agents', { headers: { authorization: '' } });
    expect(anon.status).toBe(401);
    expect(anon.json.error.code).toBe('AUTH_REQUIRED');
  });
});

describe('DELETE /emulator/agents/<number>, POST /emulator/reset', () => {
  it('removes one agent (204), then 404; a reset empties the table', async () => {
    await put(X, {});
    await put(Y, {});
    const d = await e.req(`/emulator/agents/${X}`, { method: 'DELETE' });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    const again = await e.req(`/emulator/agents/${X}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ error: { code: 'NOT_FOUND', message: `no agent ${X}` } });
    expect((await e.req('/emulator/agents')).json.map((v: { number: string }) => v.number)).toEqual([Y]);
    await e.req('/emulator/reset', { method: 'POST' });
    expect((await e.req('/emulator/agents')).json).toEqual([]);
  });

  it('agents given at start (--agents) are cleared by a reset too', async () => {
    const r = await startEmulator({ agents: new Map([[X, { answer: true, answerAfterS: 2, talkS: 10 }]]) });
    try {
      expect((await r.req('/emulator/agents')).json).toEqual([
        {
          number: X,
          answer: true,
          answer_after: 2,
          talk: 10,
          state: 'free',
          rung: 0,
          answered: 0,
          missed: 0,
          overlaps: 0,
        },
      ]);
      await r.req('/emulator/reset', { method: 'POST' });
      expect((await r.req('/emulator/agents')).json).toEqual([]);
    } finally {
      await r.close();
    }
  });
});

describe('bounds', () => {
  it(`at most ${AGENT_LIMITS.maxAgents} agents: one more is 409 TOO_MANY_AGENTS; a change to one is fine`, async () => {
    const many = new Map<string, AgentBehaviour>();
    for (let i = 0; i < AGENT_LIMITS.maxAgents; i++)
      many.set(`+4477009${String(i).padStart(5, '0')}`, { answer: true, answerAfterS: 3, talkS: 60 });
    const r = await startEmulator({ agents: many });
    try {
      const over = await r.req(`/emulator/agents/${encodeURIComponent('+447700800000')}`, { method: 'PUT', body: {} });
      expect(over.status).toBe(409);
      expect(over.json).toEqual({
        error: { code: 'TOO_MANY_AGENTS', message: 'the emulator keeps at most 10,000 agents: delete some first' },
      });
      const known = await r.req(`/emulator/agents/${encodeURIComponent('+447700900000')}`, {
        method: 'PUT',
        body: { talk: 5 },
      });
      expect(known.status).toBe(200);
      expect((await r.req('/emulator/agents')).json).toHaveLength(AGENT_LIMITS.maxAgents);
    } finally {
      await r.close();
    }
  });

  it('createEmulator checks the agents it is given', async () => {
    await expect(
      createEmulator({ logLevel: false, agents: new Map([['0123', { answer: true, answerAfterS: 3, talkS: 60 }]]) }),
    ).rejects.toThrow('agent 0123: an E.164 number is');
    await expect(
      createEmulator({ logLevel: false, agents: new Map([[X, { answer: true, answerAfterS: 3, talkS: 0 }]]) }),
    ).rejects.toThrow(`agent ${X}: talk is the seconds the agent talks once bridged: a number from 1 to 86400, got 0`);
  });
});
