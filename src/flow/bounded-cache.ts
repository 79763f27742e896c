/**
 * A cache of parsed forms keyed by their source text, bounded by the total length of the
 * keys: past `maxChars`, the oldest entries go first. The parse caches of templates and
 * expressions live as long as the process (and the reload checker's worker thread), and
 * every reload of a changed flow brings new texts: unbounded, they grew by 160 MB per
 * reload of a 2 MB flow. An evicted text is parsed again when next needed.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    if (this.map.has(key)) return;
    this.map.set(key, value);
    this.chars += key.length;
    for (const k of this.map.keys()) {
      if (this.chars <= this.maxChars || this.map.size <= 1) break;
      this.map.delete(k);
      this.chars -= k.length;
    }
  }

  get size(): number {
    return this.map.size;
  }
}
