/**
 * The `http` step (language version 2): method, url, headers, query, body, timeout_ms,
 * retries and filler under `http:`, its result keys (`ok`, exact status codes, `timeout`,
 * `error`, `default`) and the top-level `secrets:` list. Hostile bounds are checked here:
 * the sizes of what a lookup may send, the count of headers, the time bounds.
 */
import type { Branch, Branches, ExprValue, FillerEntry, Handlers, HttpSpec, HttpText, Step, Value } from './model.js';
import { type Ctx, asMap, asString, closest, didYouMean, posOf, report, requireV2 } from './check-context.js';
import { checkMedia } from './check-media.js';
import { checkInt, checkTemplateText, exprOf, toExprValue } from './check-values.js';
import { checkBranch } from './check-results.js';
import { checkVarName } from './check-context.js';
import { isTemplate } from './expr.js';
import { spanIn } from './spans.js';
import { describe, entry, type YEntry, type YMap, type YNode } from './yaml.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const HTTP_KEYS = ['method', 'url', 'headers', 'query', 'body', 'timeout_ms', 'retries', 'filler'] as const;
/** Bounds on what one lookup may send, as written (the rendered sizes are bounded again at run time). */
export const HTTP_BOUNDS = {
  urlChars: 8192,
  headers: 32,
  headerValueChars: 4096,
  queryEntries: 64,
  bodyBytes: 65536,
  timeoutMin: 100,
  timeoutMax: 30000,
  timeoutDefault: 5000,
  retriesMax: 5,
  fillerWaitMax: 30,
} as const;
/** Headers the engine sets itself (or that would let a flow smuggle a second request). */
const FORBIDDEN_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'expect',
];
const TOKEN_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** The result keys of an http step besides exact status codes. */
export const HTTP_RESULT_WORDS = ['ok', 'timeout', 'error', 'default'];

/** `secrets: [NAME, ...]`: environment variables the http steps may read (version 2). */
export function checkSecrets(ctx: Ctx, e: YEntry | undefined): string[] {
  if (!e) return [];
  requireV2(ctx, e, 'secrets:');
  if (e.value.kind === 'scalar' && e.value.type === 'null') return [];
  if (e.value.kind !== 'seq') {
    report(
      ctx,
      'TYPE_MISMATCH',
      e.value,
      `secrets must be a list of environment variable names, not ${describe(e.value)}`,
      'Write e.g. secrets: [BANK_TOKEN].',
    );
    return [];
  }
  const names: string[] = [];
  for (const item of e.value.items) {
    const n = asString(ctx, item, 'a secret name');
    if (n === undefined) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(n)) {
      report(
        ctx,
        'BAD_NAME',
        item,
        `secrets: '${n}' is not an environment variable name (letters, digits and _, not starting with a ` +
          `digit, 64 at most)`,
      );
      continue;
    }
    if (names.includes(n)) report(ctx, 'DUPLICATE_KEY', item, `secrets: '${n}' is listed twice`);
    else names.push(n);
  }
  ctx.secrets = names;
  return names;
}

/** An http step: `http: {...}` with save, on, next, handlers. */
export function checkHttpStep(ctx: Ctx, node: YMap, action: YEntry, id: string, where: string): Step | undefined {
  requireV2(ctx, action, 'http');
  const before = ctx.diags.length;
  const spec = checkHttpSpec(ctx, action, where);
  const save = entry(node, 'save');
  let saveName: string | undefined;
  if (save) {
    if (save.value.kind !== 'scalar' || save.value.type !== 'string')
      report(ctx, 'TYPE_MISMATCH', save.value, `${where}save must be a variable name, not ${describe(save.value)}`);
    else if (checkVarName(ctx, String(save.value.value), save.value, 'save:')) {
      saveName = String(save.value.value);
      ctx.declared.add(saveName);
    }
  }
  const h = entry(node, 'handlers');
  if (h && !(h.value.kind === 'scalar' && h.value.type === 'bool'))
    report(ctx, 'TYPE_MISMATCH', h.value, `${where}handlers on a step is true or false, not ${describe(h.value)}`);
  const on = checkHttpOn(ctx, entry(node, 'on'), entry(node, 'next'), where);
  if (!spec || ctx.diags.slice(before).some((d) => d.severity === 'error')) return undefined;
  const step: Step = {
    kind: 'command',
    id,
    pos: posOf(ctx, action),
    command: { name: 'http', params: {}, media: {} },
    on,
    inheritHandlers: false,
    http: spec,
  };
  if (saveName !== undefined) step.save = saveName;
  return step;
}

/** The branches of an http step: ok, timeout, error, default (or next), exact status codes 100..599. */
function checkHttpOn(ctx: Ctx, on: YEntry | undefined, next: YEntry | undefined, where: string): Branches {
  const out: Branches = { exact: {}, patterns: [] };
  let defaultEntry: YEntry | undefined;
  const map = on ? asMap(ctx, on.value, `${where}on`) : undefined;
  for (const e of map?.entries ?? []) {
    const k = e.key;
    const known = HTTP_RESULT_WORDS.includes(k) || /^[1-5][0-9][0-9]$/.test(k);
    if (!known) {
      const hint = /^[0-9]+$/.test(k)
        ? 'An HTTP status code is 3 digits from 100 to 599.'
        : (didYouMean(k, HTTP_RESULT_WORDS) ??
          'An http step branches on ok (any 2xx), exact status codes ("404"), timeout, error and default.');
      report(ctx, 'IMPOSSIBLE_RESULT', e, `${where}http has no result '${k}'`, hint);
      continue;
    }
    const b: Branch | undefined = checkBranch(ctx, e.value, where);
    if (!b) continue;
    if (k === 'default') {
      out.default = b;
      defaultEntry = e;
    } else if (k === 'error') out.error = b;
    else out.exact[k] = b;
  }
  if (next) {
    if (defaultEntry)
      report(
        ctx,
        'DUPLICATE_DEFAULT',
        next,
        `${where}has both next and on.default (line ${defaultEntry.keyNode.pos.line}); they mean the same thing`,
      );
    else {
      const b = checkBranch(ctx, next.value, where);
      if (b) out.default = b;
    }
  }
  return out;
}

function checkHttpSpec(ctx: Ctx, action: YEntry, where: string): HttpSpec | undefined {
  const node = action.value;
  if (node.kind !== 'map') {
    report(
      ctx,
      'TYPE_MISMATCH',
      node,
      `${where}http takes a map { method, url, ... }, not ${describe(node)}`,
      'Write e.g. http: { url: "https://api.example.com/v1/balance" }.',
    );
    return undefined;
  }
  const before = ctx.diags.length;
  const spec: HttpSpec = {
    method: 'GET',
    url: '',
    headers: {},
    query: {},
    timeout_ms: HTTP_BOUNDS.timeoutDefault,
    retries: 0,
  };
  let urlGiven = false;
  let typoOfUrl = false;
  const w = `${where}http `;
  const refsFrom = ctx.refs.length;
  for (const e of node.entries) {
    switch (e.key) {
      case 'method': {
        const m = asString(ctx, e.value, 'http method');
        if (m === undefined) break;
        if (!(HTTP_METHODS as readonly string[]).includes(m)) {
          const up = HTTP_METHODS.find((x) => x === m.toUpperCase());
          report(
            ctx,
            'BAD_ENUM',
            e.value,
            `${w}method '${m}' is not one of ${HTTP_METHODS.join(', ')}`,
            up ? `did you mean '${up}'? Methods are written in capitals.` : didYouMean(m.toUpperCase(), HTTP_METHODS),
          );
        } else spec.method = m as HttpSpec['method'];
        break;
      }
      case 'url': {
        urlGiven = true;
        const u = checkUrl(ctx, e.value, w);
        if (u !== undefined) spec.url = u;
        break;
      }
      case 'headers': {
        const hs = checkStringMap(ctx, e.value, `${w}headers`, HTTP_BOUNDS.headers, true);
        if (hs) spec.headers = hs;
        break;
      }
      case 'query': {
        const q = checkStringMap(ctx, e.value, `${w}query`, HTTP_BOUNDS.queryEntries, false);
        if (q) spec.query = q;
        break;
      }
      case 'body': {
        const v = toExprValue(ctx, e.value, `${w}body: `);
        if (v === undefined) break;
        const size = Buffer.byteLength(JSON.stringify(writtenOf(v)));
        if (size > HTTP_BOUNDS.bodyBytes) {
          report(
            ctx,
            'OUT_OF_BOUNDS',
            e.value,
            `${w}body is ${size.toLocaleString('en-US')} bytes of JSON as written; a lookup's body is at ` +
              `most ${HTTP_BOUNDS.bodyBytes.toLocaleString('en-US')}`,
            'Send identifiers, not data: the service behind the URL holds the rest.',
          );
          break;
        }
        spec.body = v;
        break;
      }
      case 'timeout_ms': {
        const t = checkInt(
          ctx,
          e.value,
          'timeout_ms',
          HTTP_BOUNDS.timeoutMin,
          HTTP_BOUNDS.timeoutMax,
          w,
          `An http lookup takes timeout_ms from ${HTTP_BOUNDS.timeoutMin} to ${HTTP_BOUNDS.timeoutMax} (its ` +
            `whole time, retries and fillers included; ${HTTP_BOUNDS.timeoutDefault} when not given).`,
        );
        if (t !== undefined) spec.timeout_ms = t;
        break;
      }
      case 'retries': {
        const r = checkInt(
          ctx,
          e.value,
          'retries',
          0,
          HTTP_BOUNDS.retriesMax,
          w,
          `retries is 0 to ${HTTP_BOUNDS.retriesMax}: tries again on network errors, timeouts and 5xx, with ` +
            `backoff, within timeout_ms.`,
        );
        if (r !== undefined) spec.retries = r;
        break;
      }
      case 'filler': {
        const f = checkFiller(ctx, e.value, w);
        if (f) spec.filler = f;
        break;
      }
      default: {
        const near = closest(e.key, HTTP_KEYS);
        if (near === 'url') typoOfUrl = true;
        report(
          ctx,
          'UNKNOWN_KEY',
          e,
          `${where}unknown key '${e.key}' in http`,
          near !== undefined ? `did you mean '${near}'?` : `Remove it (known: ${HTTP_KEYS.join(', ')}).`,
        );
      }
    }
  }
  // the names read by this step's request may include secrets.X; the filler's (marked false by checkFiller: it is
  // spoken to the caller) may not
  for (let i = refsFrom; i < ctx.refs.length; i++) ctx.refs[i]!.http ??= true;
  if (!urlGiven && !typoOfUrl) report(ctx, 'MISSING_KEY', action, `${where}http needs 'url'`);
  return ctx.diags.length === before ? spec : undefined;
}

function checkUrl(ctx: Ctx, node: YNode, w: string): string | undefined {
  if (node.kind !== 'scalar' || node.type !== 'string') {
    report(ctx, 'TYPE_MISMATCH', node, `${w}url must be a string, not ${describe(node)}`);
    return undefined;
  }
  const s = String(node.value);
  if (s.length > HTTP_BOUNDS.urlChars) {
    report(
      ctx,
      'OUT_OF_BOUNDS',
      node,
      `${w}url is ${s.length.toLocaleString('en-US')} characters; at ` +
        `most ${HTTP_BOUNDS.urlChars.toLocaleString('en-US')}`,
      'Put data in query: or body:, not in the URL.',
    );
    return undefined;
  }
  if (isTemplate(s)) {
    if (!checkTemplateText(ctx, s, node, w)) return undefined;
    // a template's literal start still shows the scheme when it has one
    const head = s.slice(0, s.search(/\{[{%]/));
    if (head.length >= 8 && !/^https?:\/\//i.test(head)) {
      report(
        ctx,
        'BAD_FORMAT',
        node,
        `${w}url "${head}…" is not an http:// or https:// URL`,
        'Write a full http:// or https:// URL, e.g. https://api.example.com/v1/balance.',
      );
      return undefined;
    }
    return s;
  }
  let u: URL | undefined;
  try {
    u = new URL(s);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
    report(
      ctx,
      'BAD_FORMAT',
      node,
      `${w}url "${s}" is not an http:// or https:// URL`,
      'Write a full http:// or https:// URL, e.g. https://api.example.com/v1/balance.',
    );
    return undefined;
  }
  if (u.username !== '' || u.password !== '') {
    report(
      ctx,
      'BAD_FORMAT',
      node,
      `${w}url holds credentials (user:password@); they would be logged with the URL`,
      'Send credentials in a header from a secret: headers: { Authorization: "Bearer {{ secrets.TOKEN }}" }.',
    );
    return undefined;
  }
  return s;
}

function checkStringMap(
  ctx: Ctx,
  node: YNode,
  what: string,
  max: number,
  header: boolean,
): Record<string, HttpText> | undefined {
  const map = asMap(ctx, node, what);
  if (!map) return undefined;
  if (map.entries.length > max) {
    report(ctx, 'OUT_OF_BOUNDS', node, `${what} has ${map.entries.length} entries; at most ${max}`);
    return undefined;
  }
  const out: Record<string, HttpText> = {};
  let ok = true;
  const seen = new Set<string>();
  for (const e of map.entries) {
    if (header) {
      const lower = e.key.toLowerCase();
      if (!TOKEN_RE.test(e.key)) {
        report(
          ctx,
          'BAD_FORMAT',
          e,
          `${what}: '${e.key}' is not a header name (letters, digits and !#$%&'*+.^_\`|~-, 64 at most)`,
        );
        ok = false;
        continue;
      }
      if (FORBIDDEN_HEADERS.includes(lower)) {
        report(
          ctx,
          'FORBIDDEN_HEADER',
          e,
          `${what}: '${e.key}' is set by the engine, never by a flow`,
          'Remove it: Host comes from the URL, the body sets Content-Length and Content-Type.',
        );
        ok = false;
        continue;
      }
      if (seen.has(lower)) {
        report(ctx, 'DUPLICATE_KEY', e, `${what}: '${e.key}' is given twice (header names are case-insensitive)`);
        ok = false;
        continue;
      }
      seen.add(lower);
    }
    const v = e.value;
    const expr = exprOf(ctx, v, `${what}.${e.key}: `);
    if (expr !== undefined) {
      if (expr === null) ok = false;
      else out[e.key] = { expr };
      continue;
    }
    if (v.kind !== 'scalar' || (v.type !== 'string' && v.type !== 'int' && v.type !== 'bool')) {
      report(
        ctx,
        'TYPE_MISMATCH',
        v,
        `${what}.${e.key} must be a string, not ${describe(v)}`,
        'Write a text ("{{ vars.x }}"), or { expr: "..." } for a value computed in CEL.',
      );
      ok = false;
      continue;
    }
    const s = v.type === 'string' ? String(v.value) : v.source;
    if (s.length > HTTP_BOUNDS.headerValueChars) {
      report(
        ctx,
        'OUT_OF_BOUNDS',
        v,
        `${what}.${e.key} is ${s.length.toLocaleString('en-US')} characters; at ` +
          `most ${HTTP_BOUNDS.headerValueChars.toLocaleString('en-US')}`,
      );
      ok = false;
      continue;
    }
    if (header && /[\r\n\0]/.test(s)) {
      report(ctx, 'BAD_FORMAT', v, `${what}.${e.key} holds a line break or NUL, which would end the header`);
      ok = false;
      continue;
    }
    if (!checkTemplateText(ctx, s, v, `${what}.${e.key}: `)) {
      ok = false;
      continue;
    }
    out[e.key] = s;
  }
  return ok ? out : undefined;
}

/** A body as written (its expressions as `{ expr }` maps), to weigh it. */
function writtenOf(v: ExprValue): Value {
  switch (v.kind) {
    case 'literal':
      return v.value;
    case 'expr':
      return { expr: v.expr };
    case 'list':
      return v.items.map(writtenOf);
    case 'map':
      return Object.fromEntries(v.entries.map(([k, x]) => [k, writtenOf(x)]));
  }
}

/** A filler: a media (any media form), `{ wait: n }`, or a list of them (escalating). */
export function checkFiller(ctx: Ctx, node: YNode, w: string, what = 'filler'): FillerEntry[] | undefined {
  const items = node.kind === 'seq' ? node.items : [node];
  if (items.length === 0) {
    report(ctx, 'BAD_MEDIA', node, `${w}${what} is an empty list; give at least one media or { wait: n }`);
    return undefined;
  }
  const out: FillerEntry[] = [];
  let ok = true;
  for (const it of items) {
    if (it.kind === 'map' && it.entries.length === 1 && it.entries[0]!.key === 'wait') {
      const n = checkInt(
        ctx,
        it.entries[0]!.value,
        'wait',
        1,
        HTTP_BOUNDS.fillerWaitMax,
        `${w}${what} `,
        `A ${what} wait lasts 1 to 30 seconds (the wait command).`,
      );
      if (n === undefined) ok = false;
      else out.push({ kind: 'wait', wait: n });
      continue;
    }
    if (it.kind === 'seq') {
      report(ctx, 'BAD_MEDIA', it, `${w}${what}: a list of media and waits cannot hold another list`);
      ok = false;
      continue;
    }
    // { wiat: 5 }: a misspelt wait, not a media map missing its say
    const one = it.kind === 'map' && it.entries.length === 1 ? it.entries[0]! : undefined;
    if (one && one.key !== 'say' && one.key !== 'prompt' && closest(one.key, ['wait', 'say', 'voice']) === 'wait') {
      report(ctx, 'UNKNOWN_KEY', one, `${w}${what}: unknown key '${one.key}'`, "did you mean 'wait'? ({ wait: 5 })");
      ok = false;
      continue;
    }
    const refsFrom = ctx.refs.length;
    const m = checkMedia(ctx, it, what, w, { say: true });
    for (let i = refsFrom; i < ctx.refs.length; i++) ctx.refs[i]!.http = false;
    if (m && m.length === 1) out.push({ kind: 'media', media: m[0]! });
    else ok = false;
  }
  return ok ? out : undefined;
}

/** Reads of `secrets.X`: only in an http step's request, only of a declared secret. */
export function checkSecretRefs(ctx: Ctx): void {
  const declared = ctx.secrets ?? [];
  const envSecrets = ctx.v2.envSecrets;
  for (const ref of ctx.refs) {
    if (ref.root === 'env' && envSecrets?.has(ref.name) && !ref.http) {
      const at =
        (ref.offset !== undefined && ref.at.kind === 'scalar' && spanIn(ref.at, ref.offset, ref.length ?? 0)) || ref.at;
      report(
        ctx,
        'SECRET_OUTSIDE_HTTP',
        at,
        `env.${ref.name} is a secret (read from a variable declared in secrets:), read outside an http step's ` +
          `url, headers, query or body`,
        'A secret may only leave the process in the lookup that needs it: it never goes into a variable, a ' +
          'prompt, an SMS or a log.',
      );
      continue;
    }
    if (ref.root !== 'secrets') continue;
    const at =
      (ref.offset !== undefined && ref.at.kind === 'scalar' && spanIn(ref.at, ref.offset, ref.length ?? 0)) || ref.at;
    const r = { ...ref, at };
    if (!r.http) {
      report(
        ctx,
        'SECRET_OUTSIDE_HTTP',
        r.at,
        `secrets.${r.name} is read outside an http step's url, headers, query or body`,
        'A secret may only leave the process in the lookup that needs it: it never goes into a variable, a ' +
          'prompt, an SMS or a log.',
      );
    } else if (!declared.includes(r.name)) {
      report(
        ctx,
        'UNKNOWN_SECRET',
        r.at,
        `secrets.${r.name} is not declared in secrets:`,
        didYouMean(r.name, declared) ??
          `Declare it at the top of the flow: secrets: [${[...declared, r.name].join(', ')}].`,
      );
    }
  }
}

export type { Value, Handlers };
