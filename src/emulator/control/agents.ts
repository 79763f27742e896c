/**
 * The agents table over the control API (docs/emulator.md "Agents"):
 *   GET    /emulator/agents            every agent with its behaviour, live state and counters
 *   PUT    /emulator/agents/<number>   {answer_after?, talk?, answer?}: adds it, or changes its behaviour
 *   DELETE /emulator/agents/<number>   removes it (a call it is on goes on with it)
 */
import type { FastifyInstance } from 'fastify';
import { checkE164 } from '../../protocol/formats.js';
import { AGENT_LIMITS, checkAgent } from '../agents/behaviour.js';
import { view } from '../agents/table.js';
import type { EmulatorContext } from '../context.js';
import { error } from './routes.js';

export function agentRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/agents', async () => ctx.agents.views());

  app.put('/agents/:number', async (req, reply) => {
    const number = (req.params as { number: string }).number;
    const bad = checkE164(number);
    if (bad) return error(reply, 400, 'BAD_REQUEST', `${number}: ${bad}`);
    const body = req.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body))
      return error(
        reply,
        400,
        'BAD_REQUEST',
        'the body is an agent: {"answer_after": 3, "talk": 60} or {"answer": false} ({} for the defaults)',
      );
    const c = checkAgent(number, new Map(Object.entries(body)));
    if (!c.ok) return error(reply, 400, 'BAD_REQUEST', c.problems.map((p) => p.message).join('; '));
    const rec = ctx.agents.set(number, c.behaviour);
    if (!rec)
      return error(
        reply,
        409,
        'TOO_MANY_AGENTS',
        `the emulator keeps at most ${AGENT_LIMITS.maxAgents.toLocaleString('en-US')} agents: delete some first`,
      );
    return view(rec);
  });

  app.delete('/agents/:number', async (req, reply) => {
    const number = (req.params as { number: string }).number;
    if (!ctx.agents.delete(number)) return error(reply, 404, 'NOT_FOUND', `no agent ${number}`);
    return reply.code(204).send();
  });
}
