/**
 * smsEncoding against hand-picked edge cases. Every expectation is computed by hand from
 * the rules (protocol-notes.md, "SMS REST (v1.1)"): GSM one part up to 160 positions, else
 * ceil(n / 153); UNICODE one part up to 70 UTF-16 units, else ceil(n / 67); extension
 * characters ^ { } \ [ ] ~ | € take 2 GSM positions. Nothing is read back from the package.
 */
import { describe, expect, it } from 'vitest';
import { SegmentedMessage } from 'sms-segments-calculator';
import { smsEncoding, smsParts, smsPartsAtLeast } from '../../src/sms/encoding.js';

const a = (n: number) => 'a'.repeat(n);
/** 'д' (Cyrillic, U+0434) is outside GSM: forces UNICODE, 1 UTF-16 unit. */
const d = (n: number) => 'д'.repeat(n);
const EMOJI = '😀'; // U+1F600, outside the BMP: a surrogate pair, 2 UTF-16 units

describe('GSM', () => {
  it('empty body: GSM, 0 units, 1 part (decision)', () => {
    expect(smsEncoding('')).toEqual({ encoding: 'GSM', parts: 1, units: 0, text: '' });
  });

  it('160 vs 161 positions', () => {
    // 160 <= 160: one part
    expect(smsEncoding(a(160))).toMatchObject({ encoding: 'GSM', units: 160, parts: 1 });
    // 161 > 160: ceil(161 / 153) = ceil(1.05) = 2
    expect(smsEncoding(a(161))).toMatchObject({ encoding: 'GSM', units: 161, parts: 2 });
  });

  it('153 * 2 and 153 * 2 + 1', () => {
    // 306 / 153 = 2 exactly
    expect(smsEncoding(a(306))).toMatchObject({ units: 306, parts: 2 });
    // 307 / 153 = 2.006 -> 3
    expect(smsEncoding(a(307))).toMatchObject({ units: 307, parts: 3 });
    // 153 * 3 = 459 -> 3; 460 -> 4
    expect(smsEncoding(a(459)).parts).toBe(3);
    expect(smsEncoding(a(460)).parts).toBe(4);
  });

  it('each extension character takes two positions', () => {
    for (const ch of ['^', '{', '}', '\\', '[', ']', '~', '|', '€']) {
      // 'x' + ch + 'x' = 1 + 2 + 1 = 4 positions, still GSM
      expect(smsEncoding(`x${ch}x`), ch).toMatchObject({ encoding: 'GSM', units: 4, parts: 1 });
    }
  });

  it('extension character at the 160 boundary', () => {
    // 158 + 2 = 160 positions: one part
    expect(smsEncoding(a(158) + '€')).toMatchObject({ encoding: 'GSM', units: 160, parts: 1 });
    // 159 + 2 = 161 positions: ceil(161 / 153) = 2 parts (160 characters only)
    expect(smsEncoding(a(159) + '€')).toMatchObject({ encoding: 'GSM', units: 161, parts: 2 });
    // 80 '[' = 80 * 2 = 160 positions: one part
    expect(smsEncoding('['.repeat(80))).toMatchObject({ units: 160, parts: 1 });
    // 81 '[' = 162 positions: 2 parts
    expect(smsEncoding('['.repeat(81))).toMatchObject({ units: 162, parts: 2 });
  });

  it('GSM accented letters and Greek capitals stay GSM, one position each', () => {
    // é è ù ì ò Ç Ø ø Å å Ä Ö Ñ Ü ä ö ñ ü à ß É Æ æ Δ Φ Γ Λ Ω Π Ψ Σ Θ Ξ £ ¥ § ¿ ¡ ¤ @ $ = 41 characters
    const body = 'éèùìòÇØøÅåÄÖÑÜäöñüàßÉÆæΔΦΓΛΩΠΨΣΘΞ£¥§¿¡¤@$';
    expect(body.length).toBe(41);
    expect(smsEncoding(body)).toMatchObject({ encoding: 'GSM', units: 41, parts: 1, text: body });
  });

  it('newlines are GSM: \\r\\n is two positions', () => {
    expect(smsEncoding('a\r\nb')).toMatchObject({ encoding: 'GSM', units: 4, parts: 1 });
  });
});

describe('UNICODE', () => {
  it('one character outside GSM makes the message UNICODE', () => {
    // 'ê' is not in GSM 03.38: 'fête' is 4 UTF-16 units, 1 part
    expect(smsEncoding('fête')).toEqual({ encoding: 'UNICODE', parts: 1, units: 4, text: 'fête' });
  });

  it('70 vs 71 UCS-2 units', () => {
    expect(smsEncoding(d(70))).toMatchObject({ encoding: 'UNICODE', units: 70, parts: 1 });
    // 71 > 70: ceil(71 / 67) = 2
    expect(smsEncoding(d(71))).toMatchObject({ encoding: 'UNICODE', units: 71, parts: 2 });
  });

  it('67 * 2 boundaries', () => {
    // 134 / 67 = 2 exactly
    expect(smsEncoding(d(134))).toMatchObject({ units: 134, parts: 2 });
    // 135 / 67 = 2.01 -> 3
    expect(smsEncoding(d(135))).toMatchObject({ units: 135, parts: 3 });
  });

  it('GSM characters in a UNICODE message count one unit each, extension ones too', () => {
    // 'д' + 'aaa' + '€' = 1 + 3 + 1 = 5 UTF-16 units (no doubling outside GSM)
    expect(smsEncoding('дaaa€')).toMatchObject({ encoding: 'UNICODE', units: 5 });
    // 'д' + 68 'a' + '[' = 70 units: 1 part; one more 'a' = 71: 2 parts
    expect(smsEncoding('д' + a(68) + '[')).toMatchObject({ units: 70, parts: 1 });
    expect(smsEncoding('д' + a(69) + '[')).toMatchObject({ units: 71, parts: 2 });
  });

  it('an emoji counts two UTF-16 units', () => {
    // 'hi ' (3) + emoji (2) = 5 units
    expect(smsEncoding(`hi ${EMOJI}`)).toEqual({ encoding: 'UNICODE', parts: 1, units: 5, text: `hi ${EMOJI}` });
    // 68 + 2 = 70 units: one part
    expect(smsEncoding(a(68) + EMOJI)).toMatchObject({ units: 70, parts: 1 });
    // 69 + 2 = 71 units: ceil(71 / 67) = 2 parts, though only 70 code points
    expect(smsEncoding(a(69) + EMOJI)).toMatchObject({ units: 71, parts: 2 });
    // 35 emoji = 70 units: 1 part; 36 emoji = 72 units: ceil(72 / 67) = 2 parts
    expect(smsEncoding(EMOJI.repeat(35))).toMatchObject({ units: 70, parts: 1 });
    expect(smsEncoding(EMOJI.repeat(36))).toMatchObject({ units: 72, parts: 2 });
  });

  it('an emoji straddling the 67-unit part boundary does not add a part (documented rule)', () => {
    // 66 'a' + emoji (units 67-68) + 66 'a' = 66 + 2 + 66 = 134 units = 67 * 2: 2 parts.
    // A segmenter that never splits a surrogate pair would need 3 (66 | 68 -> 67 + 1).
    const body = a(66) + EMOJI + a(66);
    expect(smsEncoding(body)).toMatchObject({ encoding: 'UNICODE', units: 134, parts: 2 });
    // The package's own segmenter does move the pair: this is where the two differ.
    expect(new SegmentedMessage(body).segmentsCount).toBe(3);
  });
});

describe('forced encodings', () => {
  it('forced GSM transliterates accented letters GSM lacks', () => {
    // ê -> e, â -> a, ç -> c, ô -> o, î -> i; é and à are GSM and stay
    const r = smsEncoding('Fête à Noël, ça coûte: côté île', 'GSM');
    // ë -> e, û -> u
    expect(r.text).toBe('Fete à Noel, ca coute: coté ile');
    // 31 characters, none an extension one
    expect(r).toMatchObject({ encoding: 'GSM', units: 31, parts: 1 });
  });

  it('forced GSM: look-alike punctuation replaced, the rest becomes ?', () => {
    // “ ” -> "  ’ -> '  … -> ...  emoji -> ?  Cyrillic д -> ?
    const r = smsEncoding('“Hi” it’s… 😀 д', 'GSM');
    expect(r.text).toBe('"Hi" it\'s... ? ?');
    // 16 characters, one position each
    expect(r).toMatchObject({ encoding: 'GSM', units: 16, parts: 1 });
  });

  it('forced GSM: a decomposed accent is composed when GSM has the result', () => {
    // 'e' + U+0301 (combining acute) -> 'é' (GSM); 'e' + U+0302 (combining circumflex) -> 'e'
    expect(smsEncoding('e\u0301 e\u0302', 'GSM')).toMatchObject({ text: 'é e', units: 3 });
  });

  it('forced GSM counts parts on the transliterated text', () => {
    // 161 'ê' would be UNICODE: 161 units, ceil(161 / 67) = 3 parts
    expect(smsEncoding('ê'.repeat(161))).toMatchObject({ encoding: 'UNICODE', parts: 3 });
    // forced GSM: 161 'e' = 161 positions, ceil(161 / 153) = 2 parts
    expect(smsEncoding('ê'.repeat(161), 'GSM')).toMatchObject({
      encoding: 'GSM',
      text: 'e'.repeat(161),
      units: 161,
      parts: 2,
    });
    // forced GSM on 70 emoji: 70 '?' = 70 positions, 1 part
    expect(smsEncoding(EMOJI.repeat(70), 'GSM')).toMatchObject({ text: '?'.repeat(70), units: 70, parts: 1 });
  });

  it('forced GSM on text already GSM changes nothing', () => {
    expect(smsEncoding(a(159) + '€', 'GSM')).toMatchObject({
      encoding: 'GSM',
      units: 161,
      parts: 2,
      text: a(159) + '€',
    });
  });

  it('forced UNICODE on plain text', () => {
    // 'Hello' = 5 UTF-16 units
    expect(smsEncoding('Hello', 'UNICODE')).toEqual({ encoding: 'UNICODE', parts: 1, units: 5, text: 'Hello' });
    // 71 'a' in GSM is one part, forced UNICODE: 71 > 70, ceil(71 / 67) = 2
    expect(smsEncoding(a(71)).parts).toBe(1);
    expect(smsEncoding(a(71), 'UNICODE')).toMatchObject({ units: 71, parts: 2 });
    // '€' is one UTF-16 unit in UNICODE (two positions in GSM)
    expect(smsEncoding('€', 'UNICODE').units).toBe(1);
    // empty body forced UNICODE: 0 units, 1 part
    expect(smsEncoding('', 'UNICODE')).toEqual({ encoding: 'UNICODE', parts: 1, units: 0, text: '' });
  });
});

describe('smsParts', () => {
  it('the two thresholds', () => {
    expect([0, 1, 160, 161, 306, 307].map((n) => smsParts('GSM', n))).toEqual([1, 1, 1, 2, 2, 3]);
    expect([0, 1, 70, 71, 134, 135].map((n) => smsParts('UNICODE', n))).toEqual([1, 1, 1, 2, 2, 3]);
  });
});

describe('cross-check with the package where the documented rule and its segmenter agree', () => {
  // Bodies with neither surrogate pairs nor extension characters: nothing can straddle a
  // part boundary, so the package's segment count must equal ours.
  const pools = ['abc XYZ 019 .,!?éàÑΔ@£', 'abc деф xyz 123 éê'];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  it('200 random bodies of 0..500 characters', () => {
    for (let i = 0; i < 200; i++) {
      const pool = pools[i % 2]!;
      const len = rand(501);
      let body = '';
      for (let j = 0; j < len; j++) body += pool[rand(pool.length)];
      const ours = smsEncoding(body);
      const theirs = new SegmentedMessage(body);
      expect(ours.encoding, body).toBe(theirs.encodingName === 'GSM-7' ? 'GSM' : 'UNICODE');
      expect(ours.parts, body).toBe(theirs.segmentsCount);
    }
  });
});

describe('long bodies: cut into pieces for the package, at grapheme boundaries', () => {
  // The package's own count on the whole body is the reference: its cost is quadratic, so
  // bodies stay under 3,000 characters here; pieces are 256 code units, so each body
  // crosses several piece boundaries, with CR LF pairs, surrogate pairs, ZWJ emoji
  // sequences, combining accents and extension characters around them.
  const pool = ['a', 'é', '€', '[', '\r\n', '😀', '👩‍👩‍👧', 'e\u0301', 'д', ' ', '🇫🇷'];
  const gsmPool = ['a', 'é', '€', '[', '\r\n', ' ', 'Δ', '@'];
  let seed = 11;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const body = (from: string[], len: number) => {
    let s = '';
    while (s.length < len) s += from[rand(from.length)];
    return s;
  };

  it('60 bodies of 500..3,000 characters count as the package counts them whole, forced GSM too', () => {
    for (let i = 0; i < 60; i++) {
      const b = body(i % 2 ? pool : gsmPool, 500 + rand(2500));
      const whole = new SegmentedMessage(b);
      const ours = smsEncoding(b);
      expect(ours.encoding, b).toBe(whole.encodingName === 'GSM-7' ? 'GSM' : 'UNICODE');
      if (ours.encoding === 'GSM') expect(ours.units).toBe(whole.numberOfCharacters);
      else expect(ours.units).toBe(b.length);
      const forced = smsEncoding(b, 'GSM');
      const forcedWhole = new SegmentedMessage(forced.text, 'GSM-7');
      expect(forced.units).toBe(forcedWhole.numberOfCharacters);
      expect(forced.text.length).toBeLessThanOrEqual(b.length);
    }
  });

  it(
    'a grapheme longer than a piece (a letter with 600 accents) is cut into pieces of 256 units, each counted ' +
      'on its own (decision: bounded work)',
    () => {
      const zalgo = 'x' + '\u0301'.repeat(600);
      // x with 255 accents is x; the other two pieces are accents alone: ? each
      expect(smsEncoding(`ab${zalgo}cd`, 'GSM')).toMatchObject({ encoding: 'GSM', text: 'abx??cd', units: 7 });
      expect(smsEncoding(`ab${zalgo}cd`)).toMatchObject({ encoding: 'UNICODE', units: 605 });
      // 50,000 accents blocked the emulator 81 s; now bounded (pieces of 256): a generous CPU bound, not a benchmark
      const c0 = process.cpuUsage();
      expect(smsEncoding('e' + '\u0301'.repeat(50_000), 'GSM')).toMatchObject({ encoding: 'GSM', parts: 2 });
      const c = process.cpuUsage(c0);
      expect((c.user + c.system) / 1000).toBeLessThan(5_000);
    },
  );

  it('folded accents are counted after folding: 20,000 e + U+0301 forced to GSM are 20,000 é', () => {
    const r = smsEncoding('e\u0301'.repeat(20000), 'GSM');
    expect(r).toMatchObject({ encoding: 'GSM', units: 20000, parts: 131 });
    expect(r.text).toBe('é'.repeat(20000));
  });

  it('255 parts of GSM (39,015 positions) are counted, not refused', () => {
    expect(smsEncoding(a(153 * 255))).toMatchObject({ encoding: 'GSM', parts: 255, units: 39015 });
  });
});

describe('smsPartsAtLeast: a bound from the length alone', () => {
  it('never more than the parts counted', () => {
    for (const b of [a(161), d(71), a(153 * 255 + 1), `${EMOJI}`.repeat(100), '€'.repeat(200)]) {
      for (const force of [undefined, 'GSM', 'UNICODE'] as const)
        expect(smsPartsAtLeast(b, force)).toBeLessThanOrEqual(smsEncoding(b, force).parts);
    }
  });
  it('over 255 parts for a GSM body of 39,016 characters, and for a UNICODE one of 17,086 when forced', () => {
    expect(smsPartsAtLeast(a(153 * 255 + 1))).toBe(256);
    expect(smsPartsAtLeast(d(67 * 255 + 1), 'UNICODE')).toBe(256);
    expect(smsPartsAtLeast(d(67 * 255 + 1))).toBe(112); // may still be GSM-sized: segmenting decides
    expect(smsPartsAtLeast(a(100000), 'GSM')).toBe(654); // each character starts a grapheme: 100,000 positions at least
    expect(smsPartsAtLeast('e\u0301'.repeat(20000), 'GSM')).toBe(131); // accents start no grapheme: 20,000 graphemes
    expect(smsPartsAtLeast('中'.repeat(39016), 'GSM')).toBe(256); // refused before segmenting
  });
});
