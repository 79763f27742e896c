/**
 * The flow checker's thread (see checker.ts): loads and checks the flow texts it is sent,
 * one message per file, and answers each with its CheckResult (plain data: diagnostics and
 * the FlowModel, which cross the thread boundary by structured clone). No state between
 * messages; `checkFlow` never throws (a checker bug becomes an INTERNAL_ERROR diagnostic).
 */
import { parentPort } from 'node:worker_threads';
import { checkFlow } from '../flow/check.js';

export interface CheckRequest {
  id: number;
  file: string;
  text: string;
  /** The file size limit (limits.flow_file_bytes); absent: the default. */
  maxFileBytes?: number;
  /** The environment selected (version 2 environments:); absent: a flow's first one. */
  environment?: string;
}

export interface CheckAnswer {
  id: number;
  result: ReturnType<typeof checkFlow>;
}

const port = parentPort;
if (port) {
  port.on('message', (m: CheckRequest) => {
    const answer: CheckAnswer = {
      id: m.id,
      result: checkFlow(m.text, m.file, {
        ...(m.maxFileBytes === undefined ? {} : { maxFileBytes: m.maxFileBytes }),
        ...(m.environment === undefined ? {} : { environment: m.environment }),
      }),
    };
    port.postMessage(answer);
  });
}
