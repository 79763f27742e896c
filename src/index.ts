/**
 * callscript's public API: the Fastify plugin and server, the flow checker and compiler,
 * the engine step, and the stores. Everything else is internal.
 */
export { callscript } from './http/plugin.js';
export { buildServer, createServer, type ServerOptions, type Server } from './http/server.js';
export type { CallscriptPluginOptions, MetricsOptions, RtOptions, Routes, UnknownCallPolicy } from './http/options.js';
export type { TrafficSource } from './http/metrics.js';
export { traceLogOptions } from './http/tracing.js';
export type { StepEvent, StepObserver } from './engine/observe.js';
export type { AnswerKind } from './engine/answer.js';
export { PluginControl } from './http/control.js';
export { serverOptions, guardServer, type TransportOptions } from './http/transport.js';
export { Registry, type LoadReport } from './registry/registry.js';
export { checkFlow } from './flow/check.js';
export { formatDiagnostic, formatDiagnostics } from './flow/format.js';
export { compileFlow, type CompiledFlow } from './engine/compile.js';
export { advance } from './engine/advance.js';
export type { CallState, CallSummary } from './engine/types.js';
export type { CallStore, HistoryStore, OutboundStore, SmsStatusStore, StoreCapabilities } from './store/types.js';
export type { FinishedRecord, PathEntry } from './engine/history.js';
export type { SmsDelivery } from './engine/sms-delivery.js';
export type { WebhookOptions } from './http/webhooks.js';
export { signatureMatches, webhookSignature } from './http/webhook-signature.js';
export { MemoryStore } from './store/memory.js';
export type { Diagnostic, Severity } from './errors/diagnostic.js';
export { CATALOGUE, codeInfo, type CodeInfo } from './errors/catalogue.js';
export { COMMANDS, COMMAND_NAMES, type CommandName } from './protocol/commands.js';
export { parseRtRequest, type ParseOptions, type ParseResult } from './protocol/request.js';
export type { RtRequest, RtResponse } from './protocol/rt.js';
export type { FlowModel } from './flow/model.js';
export { smsSender, type SmsAccount } from './http/sms-effect.js';
export { EffectError, type Effects, type SmsSender, type SmsMessage } from './http/effects.js';
export type { Effect, EffectResult } from './engine/outcome.js';
export { SmsClient, smsEncoding } from './sms/index.js';
export { ServiceClient, ServiceError, DEFAULT_API_URL, type ServiceClientOptions, type App } from './service/index.js';
export { replayRecording } from './testing/replay.js';
