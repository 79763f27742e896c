import { createServer } from '../http/server.js';
import { formatDiagnostics } from '../flow/format.js';
import { unsetServerVariables } from '../flow/check-environments.js';
import cluster from 'node:cluster';
import { resolveSettings, settingsChanges, type ServeFlags, type Settings, type SettingsResult } from './settings.js';
import { REPEAT_STOP_MS, runPrimary } from './primary.js';
import { StartOutput } from './worker-start.js';
import type { FastifyInstance } from 'fastify';
import { resolve } from 'node:path';
import { DEFAULT_WEBHOOK_PATH } from '../http/webhooks.js';
import { Recorder } from '../http/recorder.js';
import { openStore, shownUrl } from '../store/open.js';
import { capabilitiesOf } from '../store/types.js';
import { workerMetricsLink } from '../http/metrics-cluster.js';
import { logStreamFor } from './log-format.js';
import { configOptionNames } from '../config/plugin.js';
import type { DestinationStream } from 'pino';
import { printable } from '../terminal/printable.js';

/**
 * `callscript serve`: load flows, listen, print the URL and the flows. Returns the exit code
 * on failure. With `--workers N` (N > 1) this process is the cluster's primary (src/cli/primary.ts):
 * it forks N workers that each run the server, and returns their exit code once they end.
 */
export async function serve(
  flags: ServeFlags & { record?: string },
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<FastifyInstance | number> {
  const res = await resolveSettings(flags, process.env, process.cwd());
  if (!res.ok) {
    if (res.diagnostics.length > 0) err.write(formatDiagnostics(res.diagnostics, res.sources) + '\n');
    if (res.message) err.write(`callscript serve: ${res.message}\n`);
    return 2;
  }
  // JSON lines unless stdout is a terminal (LOG_FORMAT forces one)
  const logs = logStreamFor(process.env, process.stdout);
  if (!logs.ok) {
    err.write(`callscript serve: ${logs.message}\n`);
    return 2;
  }
  if (cluster.isPrimary && res.settings.workers > 1) {
    if (flags.record !== undefined) {
      err.write(
        `callscript serve: --record needs a single process (the requests of a call reach any of ` +
          `the ${res.settings.workers} workers, each would record a part of it): leave out --workers or ` +
          `--record\n`,
      );
      return 2;
    }
    // the workers print the config's warnings with their start output (one worker's is shown)
    return runPrimary({
      workers: res.settings.workers,
      logLevel: res.settings.server.logLevel || 'silent',
      ...(logs.stream ? { logStream: logs.stream } : {}),
      out,
      err,
    });
  }
  if (!cluster.isWorker) return serveHere(res, flags, logs.stream, out, err);
  // a worker: its start output goes to the primary, which prints one worker's
  const start = new StartOutput(out, err);
  const r = await serveHere(res, flags, logs.stream, start.out, start.err).catch((e: unknown) => {
    start.err.write(`callscript: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  });
  await start.finish(typeof r !== 'number');
  if (typeof r === 'number') process.exit(r);
  return r;
}

async function serveHere(
  res: SettingsResult & { ok: true },
  flags: ServeFlags & { record?: string },
  logStream: DestinationStream | undefined,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<FastifyInstance | number> {
  if (res.diagnostics.length > 0) err.write(formatDiagnostics(res.diagnostics, res.sources) + '\n');
  const { settings } = res;
  // The config file's changes (watched with the flows): routes and canary apply, the rest at restart.
  let applied: Settings = settings;
  const ctl: { apply?: () => Promise<void> } = {};
  // --record <dir>: each finished call written as a scenario file (src/http/recorder.ts).
  const log: { app?: FastifyInstance } = {};
  const recorder =
    flags.record !== undefined
      ? new Recorder(resolve(process.cwd(), flags.record), {
          maxIdleMs: settings.server.callTtlMs,
          onWrite: (file) => log.app?.log.info({ file }, 'call recorded'),
          onError: (e, callid) => log.app?.log.error({ err: e, callid }, 'recording the call failed'),
        })
      : undefined;
  // The call store: this process's memory, or Redis (shared by instances; it may come up after us).
  const store = openStore(settings.store);
  const ready = capabilitiesOf(store).ready;
  if (ready) {
    try {
      await ready(3000);
    } catch (e) {
      err.write(
        `callscript serve: warning: Redis ` +
          `at ${shownUrl(settings.store.kind === 'redis' ? settings.store.url : '')} does not answer yet ` +
          `(${(e as Error).message}): requests are answered 503 until it does; the client keeps reconnecting\n`,
      );
    }
  }
  // a worker of --workers N: a scrape of /metrics answers the sum of the workers (src/http/metrics-cluster.ts)
  const metricsCluster = cluster.isWorker && settings.server.metrics ? workerMetricsLink() : undefined;
  const { app, registry, report, control } = await createServer({
    ...settings.server,
    ...(metricsCluster && settings.server.metrics
      ? { metrics: { ...settings.server.metrics, cluster: metricsCluster } }
      : {}),
    ...(logStream ? { logStream } : {}),
    store,
    ...(recorder ? { recorder } : {}),
    watch: settings.server.watch,
    onConfigChange: () => void ctl.apply?.(),
  });
  log.app = app;
  app.addHook('onClose', async () => store.close());
  if (recorder) app.addHook('onClose', async () => recorder.flush());
  ctl.apply = async () => {
    const next = await resolveSettings(flags, process.env, process.cwd());
    if (!next.ok) {
      if (next.diagnostics.length > 0) err.write(formatDiagnostics(next.diagnostics, next.sources) + '\n');
      app.log.error(
        { code: 'CONFIG_NEEDS_RESTART', file: settings.configFile },
        `config change refused: ${next.message ?? 'the file has errors (above)'}; the running settings stay`,
      );
      return;
    }
    const ch = settingsChanges(applied, next.settings);
    if (ch.routes) {
      control.setRoutes(ch.routes);
      app.log.info({ file: settings.configFile }, 'config change: routes applied to new calls');
    }
    if (ch.canary) {
      const before = applied.server.canary ?? {};
      for (const name of Object.keys(before)) if (!(name in ch.canary)) registry.setCanary(name, undefined);
      for (const [name, p] of Object.entries(ch.canary)) {
        if (registry.setCanary(name, p) !== 'ok')
          app.log.warn({ flow: name }, `canary: no flow named "${name}" is loaded`);
      }
      app.log.info({ file: settings.configFile, canary: ch.canary }, 'config change: canary applied to new calls');
    }
    if (ch.restart.length > 0)
      app.log.warn(
        { code: 'CONFIG_NEEDS_RESTART', file: settings.configFile, settings: ch.restart },
        `config change: ${ch.restart.join(', ')} apply at the next start of callscript serve`,
      );
    applied = {
      ...next.settings,
      port: applied.port,
      host: applied.host,
      workers: applied.workers,
      ...(applied.sms ? { sms: applied.sms } : {}),
      ...(applied.service ? { service: applied.service } : {}),
      server: { ...next.settings.server, ...restartOnly(applied) },
    };
  };
  if (report && report.diagnostics.length > 0) err.write(formatDiagnostics(report.diagnostics, report.sources) + '\n');
  if (report?.diagnostics.some((d) => d.code === 'FLOWS_DIR_MISSING')) {
    await app.close();
    return 2;
  }
  const routes = settings.server.routes ?? { apps: {}, numbers: {} };
  const named: [string, string][] = [
    ...Object.entries(routes.apps).map(([k, v]): [string, string] => [`routes.apps["${k}"]`, v]),
    ...Object.entries(routes.numbers).map(([k, v]): [string, string] => [`routes.numbers["${k}"]`, v]),
    ...(routes.default !== undefined ? [['routes.default', routes.default] as [string, string]] : []),
  ];
  for (const [where, name] of named) {
    if (!registry.has(name))
      err.write(
        `${settings.configFile}: error ${'UNKNOWN_ROUTE_FLOW'} ${where} names flow "${name}", which is not ` +
          `loaded: calls routed there get 404 UNKNOWN_FLOW\n`,
      );
  }
  // the signals are handled from before the server listens: a stop sent as soon as it is up drains it
  const hup = () => {
    void control.reload('SIGHUP');
    void ctl.apply?.();
  };
  process.on('SIGHUP', hup);
  // Drain: stop accepting, answer what is in progress (503 SHUTTING_DOWN to a new request on
  // a kept-alive connection), close the store, exit. SIGINT and SIGTERM may both come, and
  // twice: a terminal's Ctrl-C reaches every process of the group, and `npm start` passes
  // the one it gets on too. A repeat within REPEAT_STOP_MS is that same stop; a later one
  // (a second Ctrl-C) exits without waiting. A worker leaves that to its primary.
  let stoppedAt: number | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stoppedAt === undefined) {
      stoppedAt = Date.now();
      process.off('SIGHUP', hup);
      void app.close().then(
        () => process.exit(0),
        (e: unknown) => {
          app.log.error({ err: e }, 'closing the server failed');
          process.exit(1);
        },
      );
      return;
    }
    if (cluster.isWorker || Date.now() - stoppedAt < REPEAT_STOP_MS) return;
    app.log.warn({ signal }, `${signal} again: exiting without waiting for the requests in progress`);
    process.exit(1);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await app.listen({ port: settings.port, host: settings.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : settings.port;
  const base = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  const flows = registry.list();
  out.write(
    `callscript serving ${flows.length} flow${flows.length === 1 ? '' : 's'} ` +
      `from ${settings.server.flowsDir} on ${base}\n`,
  );
  // a flow's name may be its file's, and file names are the contributors' (control characters escaped)
  for (const f of flows) out.write(printable(`  POST ${base}/rt/${f.name}  (${f.file}, version ${f.version})`) + '\n');
  if (report && report.refused.length > 0)
    out.write(`  refused (errors above): ${printable(report.refused.join(', '))}\n`);
  const withEnvs = flows.map((f) => registry.current(f.name)?.model).filter((m) => m?.environment !== undefined);
  if (withEnvs.length > 0) {
    const which = withEnvs.map((m) => `${m!.name}: ${m!.environment}`).join(', ');
    out.write(
      settings.server.environment !== undefined
        ? `  environment ${settings.server.environment} (${which})\n`
        : `  no environment selected (--env, environment: in the config, CALLSCRIPT_ENV): each flow runs in ` +
            `its first one (${which})\n`,
    );
  }
  out.write(
    '  calls kept in ' +
      (settings.store.kind === 'memory'
        ? 'this process (memory store)'
        : `Redis ${shownUrl(settings.store.url)}, keys ${settings.store.prefix}*`) +
      '\n',
  );
  out.write(`  health: GET ${base}/health${settings.server.auth ? '   (Basic auth on /rt)' : ''}\n`);
  if (settings.server.metrics)
    out.write(
      `  metrics: ` +
        `GET ${base}${settings.server.metrics.path}` +
        (settings.server.metrics.auth === 'admin' ? '   (admin credentials)' : '') +
        '\n',
    );
  const smsFlows = flows.filter((f) =>
    Object.values(registry.current(f.name)!.model.steps).some((s) => s.kind === 'command' && s.command.name === 'sms'),
  );
  if (settings.sms) out.write(`  sms steps send through ${settings.sms.baseUrl} as ${settings.sms.login}\n`);
  else if (smsFlows.length > 0)
    err.write(
      `callscript serve: warning: ${smsFlows.map((f) => f.name).join(', ')} send SMS but no SMS account is ` +
        `configured (sms: in callscript.yaml, or SMS_LOGIN and SMS_PASSWORD): their sms steps will take their ` +
        `error branch (UNAVAILABLE)\n`,
    );
  // secrets a flow declares and the environment does not give: its lookups would send them empty
  const unset = new Map<string, string[]>();
  for (const f of flows)
    for (const name of registry.current(f.name)?.model.secrets ?? [])
      if (!process.env[name]) unset.set(name, [...(unset.get(name) ?? []), f.name]);
  for (const [name, users] of unset)
    err.write(
      `callscript serve: warning: ${users.join(', ')} ${users.length === 1 ? 'declares' : 'declare'} the ` +
        `secret ${name}, which is not set in the environment: their http steps send it empty (set ${name} ` +
        `where the server runs)\n`,
    );
  // environment values read from variables (from_env:) that are not set and have no default: they read empty
  const unsetVars = new Map<string, string[]>();
  for (const f of flows)
    for (const name of unsetServerVariables(registry.current(f.name)?.model ?? {}, (n) => process.env[n]))
      unsetVars.set(name, [...(unsetVars.get(name) ?? []), f.name]);
  for (const [name, users] of unsetVars)
    err.write(
      `callscript serve: warning: ${users.join(', ')} ${users.length === 1 ? 'reads' : 'read'} ${name} ` +
        `(from_env: in environments:), which is not set in the environment and has no default: it reads empty ` +
        `(set ${name} where the server runs, or give the value a default)\n`,
    );
  const hooks = settings.server.webhooks;
  if (hooks?.secret !== undefined)
    out.write(
      `  webhooks: POST ${base}${hooks.path ?? DEFAULT_WEBHOOK_PATH}   (signed: X-CALLR-HmacSignature; SMS ` +
        `delivery status in the call history; see docs/webhooks.md)\n`,
    );
  else if (hooks || smsFlows.length > 0)
    out.write(
      `  webhooks: off (no secret: set CALLSCRIPT_WEBHOOK_SECRET to receive SMS delivery reports; see ` +
        `docs/webhooks.md)\n`,
    );
  if (settings.server.admin) out.write(`  admin: ${base}/admin/flows   (its own Basic auth; see docs/admin.md)\n`);
  if (settings.service)
    out.write(
      `  outbound calls (POST /admin/calls) placed through ${settings.service.url} ` +
        `as ${settings.service.login}` +
        (settings.server.admin ? '' : ' (the admin API is off: no route to place them)') +
        '\n',
    );
  if (recorder) out.write(`  recording each finished call to ${recorder.dir}/<flow>-<callid>.test.yaml\n`);
  if (settings.server.watch)
    out.write(
      `  watching ${settings.server.flowsDir}${settings.configFile ? ` and ${settings.configFile}` : ''}: ` +
        `changes reload (also on SIGHUP)\n`,
    );
  return app;
}

/** The settings that stay as started until a restart (so a later change is still reported against them). */
function restartOnly(s: Settings): Partial<Settings['server']> {
  const server = s.server as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // the options of the table (deadlineMs, ..., evalLimits, the timeouts), and the settings made by hand
  const fields = new Set(configOptionNames().map(([, name]) => name.split('.')[0]!));
  for (const f of ['flowsDir', 'fallback', 'auth', 'admin', 'metrics', 'history', 'webhooks', 'service']) fields.add(f);
  for (const f of fields) out[f] = server[f];
  return out as Partial<Settings['server']>;
}
