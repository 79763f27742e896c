/**
 * No reply before the changes it reports are on disk (--data): each API's replies wait
 * for `store.saved()` in an onSend hook. If they could not be written, the reply becomes
 * that API's error (`failure`), so a change is never acknowledged unless it is durable.
 * Reads wait too, so no reply shows a change that a crash could still take back.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EmulatorContext } from './context.js';

/** The API's error reply: sets the status and type, returns the body. */
export type StorageFailure = (reply: FastifyReply, message: string, payload: unknown) => string | null;

export function repliesWhenSaved(app: FastifyInstance, ctx: EmulatorContext, failure: StorageFailure): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    try {
      await ctx.store.saved();
      return payload;
    } catch (err) {
      return failure(reply, (err as Error).message, payload);
    }
  });
}
