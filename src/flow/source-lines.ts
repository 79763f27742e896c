/**
 * A source text's lines, indexed once: where each line starts and ends, so that a code
 * frame takes the few lines it shows without splitting the whole text again. Lines end
 * at \r\n, \r or \n, as `text.split(/\r\n|\r|\n/)` would cut them (a text ending with a
 * newline has an empty last line).
 */
export interface SourceLines {
  readonly text: string;
  /** Offset of the first character of each line. */
  readonly starts: readonly number[];
  /** Offset just past the last character of each line (before its line break). */
  readonly ends: readonly number[];
}

export function sourceLines(text: string): SourceLines {
  const starts = [0];
  const ends: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 10 && c !== 13) continue;
    ends.push(i);
    if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
    starts.push(i + 1);
  }
  ends.push(text.length);
  return { text, starts, ends };
}

export function lineCount(src: SourceLines): number {
  return src.starts.length;
}

/** Line `i` (0-based) without its line break. */
export function lineAt(src: SourceLines, i: number): string {
  return src.text.slice(src.starts[i], src.ends[i]);
}
