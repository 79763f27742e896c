import { createServer } from '../http/server.js';
import { formatDiagnostics } from '../flow/format.js';
import { resolveSettings, type ServeFlags } from './settings.js';
import type { FastifyInstance } from 'fastify';

/** `callscript serve`: load flows, listen, print the URL and the flows. Returns the exit code on failure. */
export async function serve(flags: ServeFlags, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<FastifyInstance | number> {
  const res = await resolveSettings(flags, process.env, process.cwd());
  if (res.diagnostics.length > 0) err.write(formatDiagnostics(res.diagnostics, res.sources) + '\n');
  if (!res.ok) {
    if (res.message) err.write(`callscript serve: ${res.message}\n`);
    return 2;
  }
  const { settings } = res;
  const { app, registry, report } = await createServer(settings.server);
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
    if (!registry.has(name)) err.write(`${settings.configFile}: error ${'UNKNOWN_ROUTE_FLOW'} ${where} names flow "${name}", which is not loaded: calls routed there get 404 UNKNOWN_FLOW\n`);
  }
  await app.listen({ port: settings.port, host: settings.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : settings.port;
  const base = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  const flows = registry.list();
  out.write(`callscript serving ${flows.length} flow${flows.length === 1 ? '' : 's'} from ${settings.server.flowsDir} on ${base}\n`);
  for (const f of flows) out.write(`  POST ${base}/rt/${f.name}  (${f.file}, version ${f.version})\n`);
  if (report && report.refused.length > 0) out.write(`  refused (errors above): ${report.refused.join(', ')}\n`);
  out.write(`  health: GET ${base}/health${settings.server.auth ? '   (Basic auth on /rt)' : ''}\n`);
  const smsFlows = flows.filter((f) => Object.values(registry.current(f.name)!.model.steps).some((s) => s.kind === 'command' && s.command.name === 'sms'));
  if (settings.sms) out.write(`  sms steps send through ${settings.sms.baseUrl} as ${settings.sms.login}\n`);
  else if (smsFlows.length > 0) err.write(`callscript serve: warning: ${smsFlows.map((f) => f.name).join(', ')} send SMS but no SMS account is configured (sms: in callscript.yaml, or SMS_LOGIN and SMS_PASSWORD): their sms steps will take their error branch (UNAVAILABLE)\n`);
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return app;
}
