/**
 * The JSON-RPC methods the reference names: apps.create, apps.update, apps.get, apps.get_list,
 * calls.realtime, sms.send, sms.get, sms.get_list, and the webhook subscriptions
 * (webhooks.subscribe, webhooks.get_list, webhooks.unsubscribe). Params are positional; a bad one is
 * -32602 with its position and name, an unknown object is code 20.
 */
import { checkFormat } from '../../protocol/formats.js';
import type { EmulatorContext } from '../context.js';
import { ERR } from '../errors.js';
import { getSms, listSms, sendSms } from '../sms/service.js';
import { checkSmsToSend } from '../sms/validate.js';
import { checkAppUpdate, checkNewApp, newApp } from './apps.js';
import { formatDatetime } from '../time.js';
import { placeCall } from '../driver/place.js';
import { HASH } from '../sms/service.js';
import { checkSubscription, hookView, newHook } from '../webhooks/hooks.js';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type RpcMethod = (params: unknown[]) => unknown | Promise<unknown>;

const invalid = (message: string) => new RpcError(-32602, `invalid params: ${message}`);

function arity(method: string, params: unknown[], min: number, max: number, names: string[]): void {
  if (params.length < min || params.length > max) {
    const want = min === max ? `${min}` : `${min} to ${max}`;
    throw invalid(`${method} takes ${want} params [${names.join(', ')}], got ${params.length}`);
  }
}

export function rpcMethods(ctx: EmulatorContext): Record<string, RpcMethod> {
  return {
    'apps.create': (p) => {
      arity('apps.create', p, 3, 3, ['type', 'name', 'params']);
      const r = checkNewApp(p[0], p[1], p[2]);
      if (!r.ok) throw invalid(r.message);
      const app = newApp(ctx.store.newHash(), r.value.name, r.value.p, ctx.clock.now());
      ctx.store.putApp(app);
      return app;
    },

    'apps.update': (p) => {
      arity('apps.update', p, 3, 3, ['hash', 'name', 'params']);
      const app = appOf(ctx, p[0], 0);
      const r = checkAppUpdate(app, p[1], p[2]);
      if (!r.ok) throw invalid(r.message);
      const updated = { ...app, name: r.value.name, p: r.value.p, date_update: formatDatetime(ctx.clock.now()) };
      ctx.store.putApp(updated);
      return updated;
    },

    'apps.get': (p) => {
      arity('apps.get', p, 1, 1, ['hash']);
      return appOf(ctx, p[0], 0);
    },

    'apps.get_list': (p) => {
      arity('apps.get_list', p, 0, 1, ['full']);
      if (p.length === 1 && typeof p[0] !== 'boolean') throw invalid('params[0] (full) must be true or false');
      return [...ctx.store.apps.values()];
    },

    'calls.realtime': (p) => {
      arity('calls.realtime', p, 2, 3, ['app', 'target', 'options']);
      const app = appOf(ctx, p[0], 0);
      const target = p[1];
      if (!target || typeof target !== 'object' || Array.isArray(target))
        throw invalid('params[1] (target) must be an object {number, timeout}');
      const t = target as Record<string, unknown>;
      const extraT = Object.keys(t).find((k) => k !== 'number' && k !== 'timeout');
      if (extraT) throw invalid(`params[1].${extraT} is not a target field; a target is {number, timeout}`);
      if (typeof t.number !== 'string') throw invalid('params[1].number must be an E.164 string, e.g. "+33123456789"');
      const badNumber = checkFormat('phone_number', t.number);
      if (badNumber) throw invalid(`params[1].number "${t.number}": ${badNumber}`);
      const timeout = t.timeout ?? 30;
      if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 5 || timeout > 300)
        throw invalid(`params[1].timeout must be whole seconds from 5 to 300, got ${JSON.stringify(t.timeout)}`);
      const o = p[2] ?? {};
      if (typeof o !== 'object' || Array.isArray(o))
        throw invalid('params[2] (options) must be an object {cdr_field, cli} or null');
      const opts = o as Record<string, unknown>;
      const extraO = Object.keys(opts).find((k) => k !== 'cdr_field' && k !== 'cli');
      if (extraO) throw invalid(`params[2].${extraO} is not an option; the options are cdr_field and cli`);
      for (const [k, format] of [
        ['cdr_field', 'cdr_customer_field'],
        ['cli', 'cli_phone_number'],
      ] as const) {
        if (opts[k] === undefined || opts[k] === null) continue;
        if (typeof opts[k] !== 'string') throw invalid(`params[2].${k} must be a string`);
        const bad = checkFormat(format, opts[k] as string);
        if (bad) throw invalid(`params[2].${k} "${opts[k]}": ${bad}`);
      }
      const placed = placeCall(ctx, {
        kind: 'outbound',
        app,
        to: t.number,
        ringTimeoutS: timeout,
        cdrField: (opts.cdr_field as string | undefined) ?? '',
        cli: (opts.cli as string | undefined) ?? '',
      });
      if (!placed.ok) throw new RpcError(placed.busy ? ERR.BUSY : ERR.INVALID_PARAM, placed.message);
      return placed.id;
    },

    'sms.send': (p) => {
      arity('sms.send', p, 3, 4, ['from', 'to', 'body', 'options']);
      const r = checkSmsToSend(
        { from: p[0], to: p[1], body: p[2], options: p[3] },
        (k) => k !== 'options' || p.length > 3,
      );
      if (!r.ok) throw invalid(r.message);
      const sent = sendSms(ctx, r.value);
      if (!sent.ok) throw new RpcError(sent.failure.code, sent.failure.message);
      return sent.hash;
    },

    'sms.get': (p) => {
      arity('sms.get', p, 1, 1, ['hash']);
      const r = getSms(ctx, p[0]);
      if (r.ok) return r.value;
      throw r.notFound ? new RpcError(ERR.NOT_FOUND, r.message) : invalid(`params[0] (hash): ${r.message}`);
    },

    'sms.get_list': (p) => {
      arity('sms.get_list', p, 3, 3, ['type', 'from', 'to']);
      const r = listSms(ctx, p[0], p[1], p[2]);
      if (!r.ok) throw invalid(r.message);
      return r.value;
    },

    'webhooks.subscribe': (p) => {
      arity('webhooks.subscribe', p, 2, 3, ['type', 'endpoint', 'options']);
      const r = checkSubscription(p[0], p[1], p[2]);
      if (!r.ok) throw invalid(r.message);
      const hook = newHook(ctx.store.newHash(), r.value, ctx.clock.now());
      ctx.store.putHook(hook);
      return hookView(hook);
    },

    'webhooks.get_list': (p) => {
      arity('webhooks.get_list', p, 0, 0, []);
      return ctx.webhooks.hooks().map(hookView);
    },

    'webhooks.unsubscribe': (p) => {
      arity('webhooks.unsubscribe', p, 1, 1, ['hash']);
      if (typeof p[0] !== 'string' || !HASH.test(p[0]))
        throw invalid(
          `params[0] (hash) must be a subscription hash (8 upper-case letters and digits), ` +
            `got ${JSON.stringify(p[0])?.slice(0, 40)}`,
        );
      if (ctx.webhooks.hooks().some((h) => h.hash === p[0] && h.configured))
        throw invalid(`params[0] (hash): ${p[0]} was given at start (--webhook); restart the emulator without it`);
      if (!ctx.store.deleteHook(p[0])) throw new RpcError(ERR.NOT_FOUND, `no webhook subscription with hash ${p[0]}`);
      return true;
    },
  };
}

function appOf(ctx: EmulatorContext, hash: unknown, pos: number) {
  if (typeof hash !== 'string' || !HASH.test(hash))
    throw invalid(
      `params[${pos}] (app) must be an application hash (8 upper-case letters and digits), got ${JSON.stringify(hash)}`,
    );
  const app = ctx.store.apps.get(hash);
  if (!app) throw new RpcError(ERR.NOT_FOUND, `no application with hash ${hash}`);
  return app;
}
