/**
 * A whole call through `fastify.inject`, as the telephony service drives it: the first
 * request, then one request per command carrying its result, then a terminal request.
 *
 *   const call = startCall(app, '/rt/front-desk', { callid: '1001', cli_number: '+447700900123' });
 *   await call.start();
 *   call.expect('play', { media_id: tts('Thank you for calling Acme.') });
 *   await call.answer('0');
 *   call.expect('read', { ... });
 *   await call.end('HANGUP');
 *
 * The driver numbers the commands itself (1, 2, 3, ...) and checks each reply's
 * command_id against its own count, so a reply with a wrong id fails `expect`. Every
 * reply must be checked with `expect` before the next request is sent.
 */
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { rtBody, type RtFields } from './rt.js';
import { parseRtRequest } from '../../src/protocol/request.js';

export const SERENA = 'TTS_EN-GB_SERENA';
export const DANIEL = 'TTS_EN-GB_DANIEL';

/** A TTS media as the engine sends it. */
export const tts = (text: string, voice: string = SERENA): string => `TTS|${voice}|${text}`;

/** Fields of the call that stay the same on every request (not the command ones). */
export type CallFields = Omit<Partial<RtFields>, 'command' | 'command_id' | 'command_result' | 'command_error'>;

export class CallDriver {
  /** The command_id of the last reply checked (0 before the first). */
  private id = 0;
  /** The command of the last reply checked ("" before the first). */
  private command = '';
  /** The command_id the pending reply must have; undefined once checked. */
  private pending: number | undefined;
  private lastBody = '';
  private lastRes: LightMyRequestResponse | undefined;

  constructor(
    readonly app: FastifyInstance,
    readonly url: string,
    readonly fields: CallFields,
  ) {}

  /** The reply to the last request. */
  get res(): LightMyRequestResponse {
    if (!this.lastRes) throw new Error('no request sent yet');
    return this.lastRes;
  }

  /** The raw text of the last reply. */
  get body(): string {
    return this.res.body;
  }

  /** The command_id of the last checked reply. */
  get commandId(): number {
    return this.id;
  }

  /** The variables every reply must echo. */
  get variables(): unknown {
    const v = this.fields.variables ?? {};
    return typeof v === 'string' ? JSON.parse(v) : v;
  }

  private async send(over: Partial<RtFields>): Promise<LightMyRequestResponse> {
    const body = rtBody({ call_status: 'UP', ...this.fields, ...over });
    this.lastBody = body;
    this.lastRes = await this.app.inject({
      method: 'POST',
      url: this.url,
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    return this.lastRes;
  }

  private ready(what: string): void {
    if (this.pending !== undefined)
      throw new Error(`${what}: the reply with command_id ${this.pending} was not checked with expect()`);
  }

  /** The first request of the call (command "", command_id 0). */
  async start(): Promise<this> {
    this.ready('start');
    this.id = 0;
    this.command = '';
    await this.send({ command: '', command_id: 0, command_result: '', command_error: '' });
    this.pending = 1;
    return this;
  }

  /** The next request: the last command's result. */
  async answer(result: string): Promise<this> {
    this.ready('answer');
    await this.send({ command: this.command, command_id: this.id, command_result: result, command_error: '' });
    this.pending = this.id + 1;
    return this;
  }

  /** The next request: the last command failed with this command_error. */
  async fail(error: string): Promise<this> {
    this.ready('fail');
    await this.send({ command: this.command, command_id: this.id, command_result: '', command_error: error });
    this.pending = this.id + 1;
    return this;
  }

  /**
   * Checks the last reply exactly: HTTP 200, JSON with this command, the next command_id
   * of the call, these params (toEqual: nothing more, nothing less) and the variables.
   */
  expect(command: string, params: Record<string, unknown>): this {
    if (this.pending === undefined) throw new Error('expect: no reply waiting to be checked');
    const res = this.res;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(JSON.parse(res.body)).toEqual({ command, command_id: this.pending, params, variables: this.variables });
    this.expectVariablesCanonical();
    this.id = this.pending;
    this.command = command;
    this.pending = undefined;
    return this;
  }

  /**
   * Variables given as JSON text must come back as its canonical text (keys sorted, no
   * whitespace, every digit of big numbers kept): the same text the parser gives the engine.
   */
  private expectVariablesCanonical(): void {
    if (typeof this.fields.variables !== 'string') return;
    const parsed = parseRtRequest(rtBody({ variables: this.fields.variables }));
    if (!parsed.ok) throw new Error(`the test's variables do not parse: ${parsed.message}`);
    expect(this.res.body.endsWith(`,"variables":${parsed.request.variablesRaw}}`), this.res.body).toBe(true);
  }

  /** Like `expect`, for a reply whose raw text is given exactly (bare big integers). */
  expectRaw(command: string, paramsJson: string): this {
    if (this.pending === undefined) throw new Error('expectRaw: no reply waiting to be checked');
    const vars = this.fields.variables ?? {};
    const varsJson = typeof vars === 'string' ? vars : JSON.stringify(vars);
    expect(this.res.statusCode, this.res.body).toBe(200);
    expect(this.res.body).toBe(
      `{"command":"${command}","command_id":${this.pending},"params":${paramsJson},"variables":${varsJson}}`,
    );
    this.id = this.pending;
    this.command = command;
    this.pending = undefined;
    return this;
  }

  /**
   * Sends the last request again, as the service does when it did not get the reply:
   * the reply must be the same bytes, and the call must not advance.
   */
  async retry(): Promise<this> {
    if (!this.lastRes) throw new Error('retry: nothing sent yet');
    const before = this.lastRes;
    const res = await this.app.inject({
      method: 'POST',
      url: this.url,
      headers: { 'content-type': 'application/json' },
      payload: this.lastBody,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe(before.body);
    return this;
  }

  /**
   * A terminal request (the call is over): it carries the interrupted command and its
   * command_id, with a result if given. The reply is a `hangup` with the next
   * command_id, HTTP 200, exactly.
   */
  async end(status: 'HANGUP' | 'NOANSWER' | 'BUSY' | 'CONGESTION' | 'REJECTED', result = ''): Promise<this> {
    this.ready('end');
    const res = await this.send({
      command: this.command,
      command_id: this.id,
      command_result: result,
      command_error: '',
      call_status: status,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      command: 'hangup',
      command_id: this.id + 1,
      params: {},
      variables: this.variables,
    });
    this.expectVariablesCanonical();
    this.id += 1;
    this.command = 'hangup';
    return this;
  }
}

export function startCall(app: FastifyInstance, url: string, fields: CallFields = {}): CallDriver {
  return new CallDriver(app, url, fields);
}
