/** Did-you-mean hints for misspelt names. */

/** Longer words get no hint: names are short, and the distance costs length x length. */
export const MAX_SUGGEST_LENGTH = 64;

/** ` (did you mean x?)` for a close name. */
export function suggest(word: string, names: readonly string[]): string {
  if (word.length > MAX_SUGGEST_LENGTH) return '';
  const limit = Math.max(1, Math.round(word.length / 3));
  let best: string | undefined;
  let bestD = Infinity;
  for (const n of names) {
    // the distance is at least the difference of the lengths
    if (Math.abs(n.length - word.length) > limit) continue;
    const d = distance(word.toLowerCase(), n.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best !== undefined && bestD <= limit ? ` (did you mean ${best}?)` : '';
}

/** Optimal string alignment distance (a swap of two neighbours counts 1). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
