/**
 * Generates a large, valid flow for the reload bench: menus, each a `read` step with four
 * branches ("1", "2", "3", default) leading to four `say:` steps that go on to the next
 * menu (5 steps per menu), then a goodbye and a hangup. `bigFlow(2000)` has 2,000 steps
 * (and 2 more). `variant` changes the first prompt, so each variant has its own content hash.
 */
export function bigFlow(steps: number, variant = 0, name = 'big'): string {
  const menus = Math.max(1, Math.round(steps / 5));
  const out: string[] = ['version: 1', `name: ${name}`, 'start: m0', 'steps:'];
  for (let i = 0; i < menus; i++) {
    const next = i + 1 < menus ? `m${i + 1}` : 'bye';
    const prompt = i === 0 ? `Welcome (edit ${variant}). Press 1, 2 or 3.` : `Menu ${i}: press 1, 2 or 3.`;
    out.push(
      `  m${i}:`,
      `    read: { prompt: "${prompt}", max_digits: 1 }`,
      '    on:',
      `      "1": m${i}a`,
      `      "2": m${i}b`,
      `      "3": m${i}c`,
      `      default: m${i}d`,
    );
    for (const [k, what] of [
      ['a', 'one'],
      ['b', 'two'],
      ['c', 'three'],
      ['d', 'no choice'],
    ]) {
      out.push(`  m${i}${k}:`, `    say: "You chose ${what} in menu ${i}."`, `    next: ${next}`);
    }
  }
  out.push('  bye:', '    say: "Goodbye."', '    next: end', '  end:', '    hangup: {}', '');
  return out.join('\n');
}
