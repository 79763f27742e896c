/**
 * A generated flow of `steps` steps, for size and speed tests (test/flow/big-flow.test.ts)
 * and the bench (bench/big-flow.ts): `steps - 1` menus, each a `read` with four branches
 * that each say something, then one `hangup` step. Every step is reachable and can reach
 * the end, every result of every read is handled, and branches both go forward and loop
 * back, so the graph checks see cycles: the flow checks with no diagnostic at all.
 * No anchors or aliases: its size is its own.
 */
export function bigFlow(steps: number): string {
  if (!Number.isInteger(steps) || steps < 2) throw new RangeError(`bigFlow needs at least 2 steps, got ${steps}`);
  const menus = steps - 1;
  const id = (i: number) => (i < menus ? `menu_${i}` : 'goodbye');
  const out: string[] = [
    'version: 1',
    'name: big',
    `description: A generated flow of ${steps} steps.`,
    'start: menu_0',
    'steps:',
  ];
  for (let i = 0; i < menus; i++) {
    out.push(
      `  menu_${i}:`,
      '    read:',
      `      prompt: "Menu ${i}. For the next menu press 1, to skip one press 2, to go back press 3."`,
      '      max_digits: 1',
      '      timeout_ms: 5000',
      '    on:',
      `      "1": { goto: ${id(i + 1)}, say: "Next." }`,
      `      "2": { goto: ${id(Math.min(i + 2, menus))}, say: "Skipping one." }`,
      `      "3": { goto: ${id(Math.floor(i / 2))}, say: "Going back." }`,
      '      default: { goto: goodbye, say: "Sorry, goodbye." }',
    );
  }
  out.push('  goodbye:', '    hangup: {}', '');
  return out.join('\n');
}

/**
 * A generated module (version 2 `module:`) of `steps` steps, for the bench of modules with
 * many callers (bench/modules.ts) and the tests of the link stage's bounds: `steps - 1`
 * `say` steps in a chain, then a `return: done`. About 53 bytes a step: 19,000 steps are
 * 1 MB. Checks with no diagnostic.
 */
export function bigModule(steps: number, name = 'big-module'): string {
  if (!Number.isInteger(steps) || steps < 2) throw new RangeError(`bigModule needs at least 2 steps, got ${steps}`);
  const out: string[] = ['version: 2', `name: ${name}`, 'module:', '  results: [done]', 'start: s0', 'steps:'];
  for (let i = 0; i < steps - 1; i++)
    out.push(`  s${i}:`, `    say: "Step ${i} here."`, `    next: ${i + 1 < steps - 1 ? `s${i + 1}` : 'out'}`);
  out.push('  out:', '    return: done', '');
  return out.join('\n');
}

/** A tiny flow (about 120 bytes) named `name` that enters `module` and hangs up. */
export function moduleCaller(name: string, module = 'big-module'): string {
  return [
    'version: 2',
    `name: ${name}`,
    'start: go',
    'steps:',
    '  go:',
    `    subflow: { flow: ${module} }`,
    '    next: bye',
    '  bye: { hangup: {} }',
    '',
  ].join('\n');
}
