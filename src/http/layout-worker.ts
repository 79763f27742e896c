/**
 * The layout thread of the web console (see layouts.ts): lays out the graphs it is sent,
 * one message each, and answers with dagre's positions (plain data). No state between
 * messages.
 */
import { parentPort } from 'node:worker_threads';
import { runLayout, type LayoutInput, type LayoutOutput } from '../testing/graph-layout.js';

export interface LayoutRequest {
  id: number;
  input: LayoutInput;
}

/** `ready` once, when the thread has loaded (the layout's time is counted from then). */
export type LayoutAnswer = { ready: true } | { id: number; output: LayoutOutput } | { id: number; error: string };

const port = parentPort;
if (port) {
  port.on('message', (m: LayoutRequest) => {
    let answer: LayoutAnswer;
    try {
      answer = { id: m.id, output: runLayout(m.input) };
    } catch (err) {
      answer = { id: m.id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(answer);
  });
  port.postMessage({ ready: true } satisfies LayoutAnswer);
}
