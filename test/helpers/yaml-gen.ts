/**
 * Random flow-shaped YAML for the parity tests of the incremental loader (test/flow/yaml-cache-fuzz.test.ts): top-level
 * keys in any order (`steps:` anywhere, sometimes twice), steps at an indentation of 1, 2 or 4, keys plain and
 * quoted, values of every YAML shape the loader splits around (plain, quoted and multi-line scalars, block scalars
 * with each chomping and an indentation indicator, flow maps and lists, block maps, lists at their key's column,
 * empty values), comments and blank lines at any indentation between lines, trailing comments, CRLF line ends, a
 * missing final newline. Seeded: the same text for the same seed. `editText` makes one random edit.
 */
import { int, pick, rng, type Rand } from './random.js';

const COMMENTS = ['# note', '# c: x', '# - item', '# steps:', '# "q', '#'];
const KEYS = ['say', 'next', 'read', 'on', 'prompt', '"1"', 'default', "'x y'", '"a: b"', 'goto '];
const STEP_IDS = ['a', 'b', 'c', '"d"', "'e'", 'a', 'menu_1', '"x y"', 'steps'];

function scalar(r: Rand, indent: number): string[] {
  const pad = ' '.repeat(indent);
  switch (int(r, 14)) {
    case 0:
      return ['"quoted text"'];
    case 1:
      return ["'single ''quote'''"];
    case 2:
      return ['plain words here'];
    case 3:
      return [''];
    case 4:
      return ['123'];
    case 5: {
      const head = pick(r, ['|', '|-', '|+', '>', '>-', '>+', '|2', '>1-']);
      const body = [`${pad}  line one`, `${pad}    more`, ...(r() < 0.5 ? [''] : []), `${pad}  end`];
      if (r() < 0.4) body.push('');
      if (r() < 0.3) body.push('', '');
      return [head, ...body];
    }
    case 6:
      return ['{ goto: a, say: "x" }'];
    case 7:
      return ['[a, b, "c"]'];
    case 8:
      return ['"multi', `${pad}  line quoted"`];
    case 9:
      return ['null'];
    case 10:
      return ['true   # trailing'];
    case 11:
      return ['plain', `${pad}  runs on`];
    case 12:
      return ['{ goto: a,', `${pad}  say: "x" }`];
    default:
      return ['w'];
  }
}

function decorate(r: Rand, indent: number): string[] {
  const out: string[] = [];
  while (r() < 0.25) {
    const at = pick(r, [0, 1, 2, indent, indent + 2, indent + 4]);
    out.push(r() < 0.5 ? pick(r, ['', ' ']) : `${' '.repeat(at)}${pick(r, COMMENTS)}`);
  }
  return out;
}

/** A value's lines: the first is what follows `key:` on its line. */
function value(r: Rand, indent: number, depth: number): string[] {
  const k = int(r, depth > 2 ? 2 : 5);
  if (k < 2) {
    const s = scalar(r, indent);
    return [s[0] ? ` ${s[0]}` : '', ...s.slice(1)];
  }
  const lines: string[] = [''];
  const n = 1 + int(r, 3);
  if (k < 4) {
    const at = indent + 2;
    for (let i = 0; i < n; i++) {
      const v = value(r, at, depth + 1);
      lines.push(...decorate(r, at), `${' '.repeat(at)}${pick(r, KEYS)}:${v[0]}`, ...v.slice(1));
    }
    return lines;
  }
  const at = r() < 0.5 ? indent : indent + 2;
  for (let i = 0; i < n; i++) {
    const s = scalar(r, at + 2);
    lines.push(...decorate(r, at), `${' '.repeat(at)}-${s[0] ? ` ${s[0]}` : ''}`, ...s.slice(1));
  }
  return lines;
}

export function genFlowYaml(seed: number): string {
  const r = rng(seed);
  const lines: string[] = [];
  if (r() < 0.3) lines.push('# header comment', '');
  const order = ['version: 1', 'name: f', 'start: a'];
  if (r() < 0.3) order.push('description:');
  if (r() < 0.3) order.push('vars:');
  if (r() < 0.1) order.push('version: 2');
  order.splice(int(r, order.length + 1), 0, 'steps:');
  if (r() < 0.1) order.push('steps:');
  for (const t of order) {
    lines.push(...decorate(r, 0));
    if (t === 'steps:') {
      lines.push(pick(r, ['steps:', 'steps:', 'steps:   # the steps', 'steps:  ']));
      const indent = pick(r, [2, 2, 4, 1]);
      const n = int(r, 6) + 1;
      for (let i = 0; i < n; i++) {
        const v = value(r, indent, 1);
        lines.push(...decorate(r, indent), `${' '.repeat(indent)}${pick(r, STEP_IDS)}:${v[0]}`, ...v.slice(1));
      }
    } else if (t === 'description:' || t === 'vars:') {
      const v = value(r, 0, 1);
      lines.push(`${t}${v[0]}`, ...v.slice(1));
    } else lines.push(t);
  }
  lines.push(...decorate(r, 0));
  let text = lines.join('\n') + (r() < 0.8 ? '\n' : '');
  if (r() < 0.1) text = text.replace(/ +$/gm, (m) => `${m}  `);
  if (r() < 0.15) text = text.replace(/\n/g, '\r\n');
  return text;
}

/** What an edit may insert: YAML's indicators, odd characters, whole lines. */
const INSERTS = [
  ' ',
  ':',
  '-',
  '#',
  '"',
  "'",
  '|',
  '>',
  '\n',
  'a',
  '[',
  '{',
  '}',
  ']',
  ',',
  '&',
  '*',
  '!',
  '?',
  '%',
  '@',
  '\t',
  '\r',
  '\ufeff',
  '<<',
  '---',
  '  ',
  'x: 1\n',
  '\n  ',
  '\n    q: ',
  '&a ',
  '*a',
];

/** One random edit of `text`: a character or a line inserted, removed, moved, indented, a letter changed. */
export function editText(r: Rand, text: string): string {
  const at = int(r, text.length + 1);
  const lines = text.split('\n');
  const li = int(r, lines.length);
  switch (int(r, 8)) {
    case 0:
      return text.slice(0, at) + pick(r, INSERTS) + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + int(r, 3));
    case 2: {
      const [moved] = lines.splice(li, 1);
      lines.splice(int(r, lines.length + 1), 0, moved!);
      return lines.join('\n');
    }
    case 3:
      lines.splice(li, 0, pick(r, ['', '# c', '  # c', '    # deep', ' ']));
      return lines.join('\n');
    case 4:
      lines.splice(li, 0, lines[li] ?? '');
      return lines.join('\n');
    case 5:
      lines.splice(li, 1);
      return lines.join('\n');
    case 6:
      lines[li] = r() < 0.5 ? ` ${lines[li]}` : lines[li]!.replace(/^ /, '');
      return lines.join('\n');
    default: {
      const m = /[a-z]/.exec(text.slice(at));
      if (!m) return text;
      const p = at + m.index;
      return text.slice(0, p) + pick(r, ['q', 'z', 'e']) + text.slice(p + 1);
    }
  }
}
