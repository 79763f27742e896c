/**
 * Strongly connected components (Tarjan, iterative: no recursion, however long a chain), in the order Tarjan closes
 * them.
 */
export function sccs<T>(nodes: T[], edges: (n: T) => T[]): T[][] {
  const index = new Map<T, number>();
  const low = new Map<T, number>();
  const onStack = new Set<T>();
  const stack: T[] = [];
  const out: T[][] = [];
  let i = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { id: T; it: number; es: T[] }[] = [{ id: root, it: 0, es: edges(root) }];
    index.set(root, i);
    low.set(root, i++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      if (top.it < top.es.length) {
        const w = top.es[top.it++]!;
        if (!index.has(w)) {
          index.set(w, i);
          low.set(w, i++);
          stack.push(w);
          onStack.add(w);
          work.push({ id: w, it: 0, es: edges(w) });
        } else if (onStack.has(w)) low.set(top.id, Math.min(low.get(top.id)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.id;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.id)!));
      }
      if (low.get(top.id) === index.get(top.id)) {
        const comp: T[] = [];
        let w: T;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.id);
        out.push(comp);
      }
    }
  }
  return out;
}
