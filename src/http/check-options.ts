/** The plugin's options as given by code, checked like the config file's: a clear error at registration. */
import { metricsPathProblem, type CallscriptPluginOptions, type RtOptions } from './options.js';

/** Options given to the plugin by code are checked like the config file's: a clear error at registration. */
export function checkOptions(o: RtOptions & Pick<CallscriptPluginOptions, 'admin' | 'canary' | 'metrics'>): void {
  const bad = (what: string) => {
    throw new Error(`callscript plugin: ${what}`);
  };
  if (!Number.isInteger(o.deadlineMs) || o.deadlineMs < 100 || o.deadlineMs > 4900)
    bad(`deadlineMs must be an integer from 100 to 4900, got ${o.deadlineMs}`);
  if (!Number.isInteger(o.bodyLimit) || o.bodyLimit < 1024 || o.bodyLimit > 1048576)
    bad(`bodyLimit must be an integer from 1024 to 1048576, got ${o.bodyLimit}`);
  if (!Number.isInteger(o.bodyDepth) || o.bodyDepth < 2 || o.bodyDepth > 256)
    bad(`bodyDepth must be an integer from 2 to 256, got ${o.bodyDepth}`);
  if (!Number.isInteger(o.callTtlMs) || o.callTtlMs < 1000)
    bad(`callTtlMs must be an integer of at least 1000, got ${o.callTtlMs}`);
  if (!Number.isInteger(o.liveCheckMs) || o.liveCheckMs < 100 || o.liveCheckMs > 3_600_000)
    bad(`liveCheckMs must be an integer from 100 to 3600000, got ${o.liveCheckMs}`);
  if (!Number.isInteger(o.endedTtlMs) || o.endedTtlMs < 1000)
    bad(`endedTtlMs must be an integer of at least 1000, got ${o.endedTtlMs}`);
  if (!Number.isInteger(o.maxStateBytes) || o.maxStateBytes < 1024 || o.maxStateBytes > 1048576)
    bad(`maxStateBytes must be an integer from 1024 to 1048576, got ${o.maxStateBytes}`);
  for (const [k, lo, hi] of [
    ['celUnits', 1000, 1e7],
    ['templateMs', 1, 1000],
    ['templateMemory', 1000, 1e7],
  ] as const) {
    const v = o.evalLimits?.[k];
    if (!Number.isInteger(v) || v! < lo || v! > hi)
      bad(`evalLimits.${k} must be an integer from ${lo} to ${hi}, got ${String(v)}`);
  }
  if (!Number.isInteger(o.maxLiveCalls) || o.maxLiveCalls < 1)
    bad(`maxLiveCalls must be a positive integer, got ${o.maxLiveCalls}`);
  if (!Number.isInteger(o.maxFlowBytes) || o.maxFlowBytes < 1024 || o.maxFlowBytes > 67108864)
    bad(`maxFlowBytes must be an integer from 1024 to 67108864, got ${o.maxFlowBytes}`);
  if (!Number.isInteger(o.authFailureLimit) || o.authFailureLimit < 0 || o.authFailureLimit > 100000)
    bad(`authFailureLimit must be an integer from 0 to 100000, got ${o.authFailureLimit}`);
  if (!Number.isInteger(o.authFailureWindowMs) || o.authFailureWindowMs < 1000 || o.authFailureWindowMs > 86_400_000)
    bad(`authFailureWindowMs must be an integer from 1000 to 86400000, got ${o.authFailureWindowMs}`);
  if (!Number.isInteger(o.reloadSettleMs) || o.reloadSettleMs < 0 || o.reloadSettleMs > 60000)
    bad(`reloadSettleMs must be an integer from 0 to 60000, got ${o.reloadSettleMs}`);
  if (!['restart', 'hangup', 'reject'].includes(o.unknownCall))
    bad(`unknownCall must be restart, hangup or reject, got ${String(o.unknownCall)}`);
  if (
    o.admin &&
    (typeof o.admin.login !== 'string' ||
      typeof o.admin.password !== 'string' ||
      o.admin.login === '' ||
      o.admin.password === '')
  )
    bad('admin needs a non-empty login and password');
  for (const [name, p] of Object.entries(o.canary ?? {}))
    if (typeof p !== 'number' || !(p >= 0 && p <= 100))
      bad(`canary.${name} must be a percent from 0 to 100, got ${String(p)}`);
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
    if (m.auth !== undefined && m.auth !== 'none' && m.auth !== 'admin')
      bad(`metrics.auth must be none or admin, got ${String(m.auth)}`);
    if (m.auth === 'admin' && !o.admin)
      bad('metrics.auth admin needs the admin credentials (the admin option): without them /metrics would be open');
  }
}
