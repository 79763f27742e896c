/**
 * A text without the random and clock-made runs in which a short secret's digits (a 4-digit PIN) come up by chance:
 * trace and span ids (hex runs of 16 or more: "1e3782d45aca3036651e22434821c4ef" holds 4821), epoch milliseconds
 * (digit runs of 8 or more) and long decimals (durations). A secret that leaks as a value ("4821", "PIN 4821") stays.
 */
export function withoutNoise(text: string): string {
  return text
    .replace(/[0-9a-f]{16,}/gi, '#')
    .replace(/\d+\.\d{3,}/g, '#')
    .replace(/\d{8,}/g, '#');
}
