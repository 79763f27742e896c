/**
 * A version 2 flow around one queue step `a`, for the checker's tests of queues (queue-check.test.ts). Its lines:
 * 1 version, 2 start, 3-4 handlers (hangup: noted), 5 vars, 6 steps:, 7 `a:`, 8 `queue:`, 9 name, 10 agents, then
 * the `extra` keys of queue: from line 11, then save, on: (bridged, timeout, empty) and the `step` lines; then the
 * steps bye, noted and `more`.
 */
export interface QueueFlow {
  /** Replaces the name and agents lines (9, 10). */
  queue?: readonly string[];
  /** More keys of queue:, from line 11. */
  extra?: readonly string[];
  /** Replaces the branches under on:. */
  on?: readonly string[];
  /** More keys of the step, after on:. */
  step?: readonly string[];
  /** More steps, after bye and noted. */
  more?: readonly string[];
  version?: number;
}

export const NAME = '      name: sales';
export const AGENTS = '      agents: ["+442079460001", "+442079460002"]';
export const BRANCHES = ['      bridged: noted', '      timeout: bye', '      empty: bye'];

export function qflow(p: QueueFlow = {}): string {
  return (
    [
      `version: ${p.version ?? 2}`,
      'start: a',
      'handlers:',
      '  hangup: noted',
      'vars: { team: ["+442079460003"], outcome: "" }',
      'steps:',
      '  a:',
      '    queue:',
      ...(p.queue ?? [NAME, AGENTS]),
      ...(p.extra ?? []),
      '    save: place',
      '    on:',
      ...(p.on ?? BRANCHES),
      ...(p.step ?? []),
      '  bye: { hangup: {} }',
      '  noted: { set: { outcome: served } }',
      ...(p.more ?? []),
    ].join('\n') + '\n'
  );
}
