/**
 * Reproducible identifiers: a splitmix64 generator whose whole state is one 64-bit
 * integer (kept as a decimal string in the data file, so that a restart goes on with new
 * ids instead of repeating old ones).
 *
 * - hashes (SMS, applications, calls.realtime ids, recordings): 8 upper-case letters and
 *   digits, like the service's `8242D945`;
 * - callids: 64-bit unsigned integers spread over the whole range on a log scale (the
 *   bit length is drawn first), so that small ones, ones just above 2^32 and ones above
 *   2^53 (about 1 in 6) all occur.
 */
const MASK = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export class Ids {
  private state: bigint;

  /** `seed`: any text (hashed to a state), or a state written by `stateText`. */
  constructor(seed: string) {
    this.state = /^[0-9]{1,20}$/.test(seed) && BigInt(seed) <= MASK ? BigInt(seed) : seedFromText(seed);
  }

  /** The state, to persist and pass back to the constructor. */
  get stateText(): string {
    return this.state.toString();
  }

  next64(): bigint {
    this.state = (this.state + GOLDEN) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  /** A whole number in [0, n). */
  below(n: number): number {
    return Number(this.next64() % BigInt(n));
  }

  /** 8 upper-case letters and digits, not one `taken` says is used. */
  hash(taken: (h: string) => boolean = () => false): string {
    for (;;) {
      let h = '';
      for (let i = 0; i < 8; i++) h += ALNUM[this.below(ALNUM.length)];
      if (!taken(h)) return h;
    }
  }

  /** A callid: 1 .. 2^64-1, log-uniform (bit length 1..64 drawn first). */
  callid(): string {
    const bits = BigInt(1 + this.below(64));
    const top = 1n << (bits - 1n);
    return (top | (this.next64() & (top - 1n))).toString();
  }

  /** Lower-case hex digits, for temporary file names. */
  hex(n: number): string {
    let s = '';
    while (s.length < n) s += this.next64().toString(16).padStart(16, '0');
    return s.slice(0, n);
  }
}

function seedFromText(text: string): bigint {
  // FNV-1a 64 over the UTF-8 bytes.
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(text, 'utf8')) h = ((h ^ BigInt(b)) * 0x100000001b3n) & MASK;
  return h;
}
