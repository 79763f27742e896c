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
