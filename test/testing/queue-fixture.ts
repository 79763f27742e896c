/** Queue flows shared by the tests of the queue step in the tools (test/testing/queue-*.test.ts). */
import { compileFlow, type CompiledFlow } from '../../src/engine/compile.js';
import { checkFlow } from '../../src/flow/check.js';

export function compiled(text: string, file = 'line.yaml'): CompiledFlow {
  const { model, diagnostics } = checkFlow(text, file);
  if (!model) throw new Error(JSON.stringify(diagnostics));
  return compileFlow(model, text);
}

/** A queue with hold chunks, announcements, every branch and a hangup handler. */
export const LINE = `version: 2
name: line
start: greet
handlers:
  hangup: noted
steps:
  greet: { say: "Welcome.", next: wait_line }
  wait_line:
    queue:
      name: sales
      agents: ["+442079460001", "+442079460002"]
      ring_time: 15
      max_wait: 600
      hold: ["Please hold.", { wait: 20 }]
      announce: { every: 60, say: "You are number {{ vars.place.position }} in line." }
    save: place
    on:
      bridged: survey
      timeout: { goto: sorry, say: "Nobody could take your call." }
      empty: closed
      error: closed
  sorry: { say: "Goodbye.", next: bye }
  closed: { say: "We are closed.", next: bye }
  bye: { hangup: {} }
  survey: { set: { outcome: served } }
  noted: { set: { outcome: left } }
vars: { outcome: "" }
`;

/** The smallest queue: no announcement, no branch but next:, no hangup handler. */
export const BARE = `version: 2
name: bare
start: q
steps:
  q:
    queue: { name: help, agents: ["+442079460009"] }
    next: bye
  bye: { say: "Bye.", next: end }
  end: { hangup: {} }
`;
