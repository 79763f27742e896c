/**
 * Helpers of the web console's tests (test/http/console*.test.ts) and its screenshot script
 * (bench/console-screenshot.ts): a server with admin credentials on a real port, calls
 * driven through /rt, and headless Chromium (Debian's package, /usr/bin/chromium).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { createServer, type Server, type ServerOptions } from '../../src/http/server.js';
import { rtBody, type RtFields } from './rt.js';

export const CHROMIUM = '/usr/bin/chromium';
export const ADMIN = { login: 'boss', password: 's3cret' };
export const ADMIN_HEADER = 'Basic ' + Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64');

/**
 * Whether the browser tests run: with /usr/bin/chromium. Without it they are skipped with a
 * message, unless CI=true, where they fail (.ci/run installs the package).
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const msg =
    `${CHROMIUM} is missing: the web console's browser tests need Debian's chromium (apt-get install -y ` + `chromium)`;
  if (process.env.CI === 'true') throw new Error(`${msg}; CI=true, so they fail rather than skip`);
  console.warn(`SKIPPED: ${msg}`);
  return false;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  // --no-sandbox: tests run as root in containers, where Chromium's sandbox cannot start
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A flows directory with these files. */
export function flowsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'callscript-console-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** A server on 127.0.0.1 (a free port) with admin credentials. */
export async function listen(options: ServerOptions): Promise<Server & { url: string }> {
  const server = await createServer({ logLevel: false, admin: ADMIN, ...options });
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...server, url: address };
}

/**
 * A call as the service drives it: the first request, then each command's result, then a
 * terminal status. Throws on an answer that is not 200.
 */
export class RtCall {
  private id = 0;
  private command = '';
  /** The last reply. */
  reply: { command: string; command_id: number; params: Record<string, unknown> } | undefined;

  constructor(
    private readonly app: FastifyInstance,
    private readonly flow: string,
    private readonly fields: Partial<RtFields>,
  ) {}

  private async send(over: Partial<RtFields>): Promise<this> {
    const res = await this.app.inject({
      method: 'POST',
      url: `/rt/${this.flow}`,
      headers: { 'content-type': 'application/json' },
      payload: rtBody({ call_status: 'UP', ...this.fields, ...over }),
    });
    if (res.statusCode !== 200) throw new Error(`/rt/${this.flow} answered ${res.statusCode}: ${res.body}`);
    this.reply = JSON.parse(res.body) as RtCall['reply'];
    this.id = this.reply!.command_id;
    this.command = this.reply!.command;
    return this;
  }

  start(): Promise<this> {
    return this.send({ command: '', command_id: 0, command_result: '', command_error: '' });
  }

  answer(result: string): Promise<this> {
    return this.send({ command: this.command, command_id: this.id, command_result: result, command_error: '' });
  }

  end(status = 'HANGUP'): Promise<this> {
    return this.send({
      command: this.command,
      command_id: this.id,
      command_result: '',
      command_error: '',
      call_status: status,
    });
  }
}
