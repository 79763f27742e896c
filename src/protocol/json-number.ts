/**
 * One reading of a JSON number, whatever its spelling: its canonical text and the value
 * flows see. The canonical text is the number's exact decimal value written the way
 * JavaScript writes numbers (Number::toString: `1.0` and `10e-1` are `1`, `-0` is `0`,
 * `1e21` is `1e+21`), applied to the exact value, so no digit is ever dropped
 * (`12345678901234567890` stays as it is). The value is a JS number when that number is
 * exactly the decimal value written (its own text is the canonical text), else the
 * canonical text itself, a string (an integer beyond 2^53, a long decimal, `1e400`).
 */

/** Canonical text and value of the valid JSON number `token`. */
export function jsonNumber(token: string): { text: string; value: number | string } {
  const digits = mantissaDigits(token);
  if (digits <= 15) {
    // Integers of up to 15 digits are exact doubles written as they are (JSON has no
    // leading zeros); only -0 changes. Most numbers are these.
    if (digits === token.length - (token.charCodeAt(0) === 45 ? 1 : 0)) {
      const n = Number(token);
      return n === 0 ? ZERO : { text: token, value: n };
    }
    // Up to 15 significant digits, a normal double is the nearest to one decimal only:
    // its shortest text (String) is that decimal's canonical text. Zero, subnormals and
    // overflow go the exact way below.
    const n = Number(token);
    const a = Math.abs(n);
    if (a >= MIN_NORMAL && a !== Infinity) return { text: String(n), value: n };
  }
  const text = canonicalText(token);
  const n = Number(text);
  return Number.isFinite(n) && String(n) === text ? { text, value: n === 0 ? 0 : n } : { text, value: text };
}

const ZERO = Object.freeze({ text: '0', value: 0 });
const MIN_NORMAL = 2.2250738585072014e-308;

/** How many digits the mantissa (before any exponent) has, the decimal point aside. */
function mantissaDigits(token: string): number {
  let n = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
    else if (c === 101 || c === 69) break;
  }
  return n;
}

/** The exact decimal value of a valid JSON number token, in Number::toString's form. */
export function canonicalText(token: string): string {
  const neg = token.charCodeAt(0) === 45;
  const e = token.search(/[eE]/);
  const mantissa = e < 0 ? token.slice(neg ? 1 : 0) : token.slice(neg ? 1 : 0, e);
  const dot = mantissa.indexOf('.');
  const fraction = dot < 0 ? '' : mantissa.slice(dot + 1);
  let digits = (dot < 0 ? mantissa : mantissa.slice(0, dot)) + fraction;
  // value = digits * 10^exp; the exponent as a bigint (JSON allows any number of its digits)
  let exp = (e < 0 ? 0n : BigInt(token.slice(e + 1).replace(/^\+/, ''))) - BigInt(fraction.length);
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 48) lead++;
  if (lead === digits.length) return '0';
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 48) end--;
  exp += BigInt(digits.length - end);
  digits = digits.slice(lead, end);
  const k = digits.length;
  const n = exp + BigInt(k); // the value is 0.digits * 10^n
  const sign = neg ? '-' : '';
  if (n >= k && n <= 21) return sign + digits + '0'.repeat(Number(n) - k);
  if (n > 0 && n <= 21) return sign + digits.slice(0, Number(n)) + '.' + digits.slice(Number(n));
  if (n > -6 && n <= 0) return sign + '0.' + '0'.repeat(-Number(n)) + digits;
  const e10 = n - 1n;
  return (
    sign +
    digits[0] +
    (k > 1 ? '.' + digits.slice(1) : '') +
    'e' +
    (e10 < 0n ? '-' : '+') +
    (e10 < 0n ? -e10 : e10).toString()
  );
}
