/**
 * `callscript queues [name]` and `callscript queues <name> pause|resume <number>`: the queues of a running server
 * (their lines, agents and counts) from its admin API (docs/admin.md "Queues"), printed by ./queues-format.ts, and
 * pausing or resuming an agent in a queue. The server as for `callscript calls` (./admin-client.ts).
 */
import { AdminRequestError, adminRequest, adminServer } from './admin-client.js';
import { queueText, queuesText, type QueueJson } from './queues-format.js';
import { printable } from '../terminal/printable.js';

export interface QueuesFlags {
  server?: string;
  json?: boolean;
}

const ACTIONS = ['pause', 'resume'] as const;

/**
 * Exit code: 0 shown (or changed), 1 the server refused (no such queue, a bad number), 2 could not ask (server down,
 * credentials, no admin API or no queues in its store, bad arguments).
 */
export async function queues(
  args: { name?: string; action?: string; number?: string },
  flags: QueuesFlags,
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const fail = (msg: string, code = 2) => (err.write(`callscript queues: ${printable(msg)}\n`), code);
  const { name, action, number } = args;
  if (action !== undefined && !(ACTIONS as readonly string[]).includes(action))
    return fail(`the action is pause or resume, not "${action}": callscript queues <name> pause|resume <number>`);
  if (action !== undefined && number === undefined)
    return fail(`give the agent's number: callscript queues ${name} ${action} <number> (E.164, e.g. +33612345678)`);
  const admin = adminServer(flags.server, env);
  if (typeof admin === 'string') return fail(admin);
  const path = name === undefined ? 'admin/queues' : `admin/queues/${encodeURIComponent(name)}`;
  let data: unknown;
  try {
    data =
      action === undefined
        ? await adminRequest(admin, 'GET', path)
        : await adminRequest(admin, 'POST', `${path}/agents`, { number, paused: action === 'pause' });
  } catch (e) {
    if (!(e instanceof AdminRequestError)) throw e;
    return fail(e.message, exitOf(e));
  }
  if (flags.json) {
    out.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  }
  if (action !== undefined)
    out.write(`${printable(`agent ${number} ${action === 'pause' ? 'paused' : 'resumed'} in queue ${name}`)}\n\n`);
  out.write(
    `${name === undefined ? queuesText((data as { queues: QueueJson[] }).queues) : queueText(data as QueueJson)}\n`,
  );
  return 0;
}

/** A store without queues is a server that cannot answer (2); an unknown queue or a bad number, a refusal (1). */
function exitOf(e: AdminRequestError): number {
  return e.code === 'QUEUES_UNSUPPORTED' ? 2 : e.exit;
}
