/** The plugin's options as given by code, checked like the config file's: a clear error at registration. */
import { codeValues } from '../config/code.js';
import { numberAt } from '../config/defaults.js';
import { orList } from '../config/options.js';
import { pluginOptionProblem } from '../config/plugin.js';
import { allowedHostsProblem } from './hosts.js';
import { metricsPathProblem, type CallscriptPluginOptions, type RtOptions } from './options.js';

/** Options given to the plugin by code are checked like the config file's: a clear error at registration. */
export function checkOptions(o: RtOptions & Pick<CallscriptPluginOptions, 'admin' | 'canary' | 'metrics'>): void {
  const bad = (what: string) => {
    throw new Error(`callscript plugin: ${what}`);
  };
  // the numbers and choices of the table of options (src/config/table.ts), in the plugin's units
  const problem = pluginOptionProblem(o);
  if (problem !== undefined) bad(problem);
  const hosts = allowedHostsProblem(o.allowedHosts);
  if (hosts !== undefined) bad(hosts);
  if (
    o.admin &&
    (typeof o.admin.login !== 'string' ||
      typeof o.admin.password !== 'string' ||
      o.admin.login === '' ||
      o.admin.password === '')
  )
    bad('admin needs a non-empty login and password');
  const percent = numberAt('canary.*');
  for (const [name, p] of Object.entries(o.canary ?? {}))
    if (typeof p !== 'number' || !(p >= percent.min && p <= percent.max))
      bad(`canary.${name} must be a percent from ${percent.min} to ${percent.max}, got ${String(p)}`);
  if (
    o.auth &&
    (typeof o.auth.login !== 'string' ||
      typeof o.auth.password !== 'string' ||
      o.auth.login === '' ||
      o.auth.password === '')
  )
    bad('auth needs a non-empty login and password');
  const m = o.metrics;
  if (m !== undefined && m !== false) {
    if (typeof m !== 'object' || m === null) bad(`metrics must be false or { path, auth }, got ${String(m)}`);
    const problem = m.path === undefined ? undefined : metricsPathProblem(m.path);
    if (problem) bad(`metrics.path ${problem}`);
    const auths = codeValues('metrics.auth');
    if (m.auth !== undefined && !auths.includes(m.auth))
      bad(`metrics.auth must be ${orList(auths)}, got ${String(m.auth)}`);
    if (m.auth === 'admin' && !o.admin)
      bad('metrics.auth admin needs the admin credentials (the admin option): without them /metrics would be open');
  }
}
