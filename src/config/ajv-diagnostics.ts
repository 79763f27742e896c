/**
 * The config file's schema errors (ajv) as diagnostics at the place of the mistake: unknown keys with
 * did-you-mean, types, bounds and allowed values as the table of options gives them, strings that do not match
 * their pattern with the option's own message.
 */
import type { ErrorObject } from 'ajv';
import { type Ctx, didYouMean, report } from '../flow/check-context.js';
import { clip, describe, entry, type YMap, type YNode } from '../flow/yaml.js';
import type { OptionDef } from './options.js';
import { OPTIONS, SECTIONS } from './table.js';

/** The YAML node (and the map entry holding it) at a JSON pointer. */
function nodeAt(root: YNode, pointer: string): { node: YNode; key?: YMap['entries'][number] } {
  let node = root;
  let key: YMap['entries'][number] | undefined;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node.kind === 'map') {
      const e = entry(node, seg);
      if (!e) break;
      key = e;
      node = e.value;
    } else if (node.kind === 'seq' && node.items[Number(seg)]) {
      key = undefined;
      node = node.items[Number(seg)]!;
    } else break;
  }
  return key ? { node, key } : { node };
}

function pathText(pointer: string): string {
  return pointer.split('/').slice(1).join('.') || 'the file';
}

/**
 * The option a JSON pointer falls in: `/sms/base_url`, an item of a list (`/store/cluster/0`), a name of a map of
 * names (`/canary/front-desk`: `canary.*`), or a section given as a string (`/store`: `store.url`).
 */
function optionOf(pointer: string): OptionDef | undefined {
  const segs = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const keys = [
    segs.join('.'),
    segs.filter((s) => !/^[0-9]+$/.test(s)).join('.'),
    [...segs.slice(0, -1), '*'].join('.'),
  ];
  const found = OPTIONS.find((o) => o.key !== undefined && keys.includes(o.key));
  if (found) return found;
  // a section given as a string (store: redis://...) stands for its option `orString`
  const orString = segs.length === 1 ? SECTIONS[segs[0]!]?.orString : undefined;
  return orString === undefined ? undefined : OPTIONS.find((o) => o.key === `${segs[0]}.${orString}`);
}

const valueText = (node: YNode) => clip(String(node.kind === 'scalar' ? node.value : ''));

export function ajvError(ctx: Ctx, root: YNode, e: ErrorObject): void {
  if (e.schemaPath.startsWith('#/properties/fallback/')) return; // checked by hand, as a media
  const { node, key } = nodeAt(root, e.instancePath);
  const where = pathText(e.instancePath);
  const p = e.params as Record<string, unknown>;
  const parentSchema = e.parentSchema as { properties?: Record<string, unknown> } | undefined;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const at = node.kind === 'map' ? entry(node, name) : undefined;
      const known = Object.keys(parentSchema?.properties ?? {});
      report(
        ctx,
        'UNKNOWN_KEY',
        at ?? node,
        `${where === 'the file' ? '' : `${where}: `}unknown key '${name}'`,
        didYouMean(name, known) ?? `Known keys: ${known.join(', ')}.`,
      );
      return;
    }
    case 'type':
      report(ctx, 'TYPE_MISMATCH', node, `${where} must be ${typeText(String(p.type))}, not ${describe(node)}`);
      return;
    case 'minimum':
    case 'maximum': {
      const s = parentSchema as { minimum?: number; maximum?: number } | undefined;
      report(
        ctx,
        'OUT_OF_BOUNDS',
        node,
        `${where} must be between ${s?.minimum} and ${s?.maximum}, ` +
          `got ${node.kind === 'scalar' ? node.source : describe(node)}`,
      );
      return;
    }
    case 'enum': {
      const allowed = (p.allowedValues as string[]) ?? [];
      const v = node.kind === 'scalar' ? String(node.value) : '';
      report(
        ctx,
        'BAD_ENUM',
        node,
        `${where} must be one of ${allowed.join(', ')}, ` +
          `not ${node.kind === 'scalar' ? `"${clip(v)}"` : describe(node)}`,
        didYouMean(v, allowed),
      );
      return;
    }
    case 'minLength':
    case 'maxLength': {
      const o = optionOf(e.instancePath);
      if (o?.type === 'string' && o.secret) {
        // a secret is never repeated in a message
        report(
          ctx,
          o.format?.code ?? 'BAD_FORMAT',
          node,
          `${where} must be ${o.minLength} to ${o.maxLength} characters, got ` +
            `${node.kind === 'scalar' ? String(node.value).length : 0}`,
          o.format?.hint,
        );
        return;
      }
      report(ctx, 'TYPE_MISMATCH', node, `${where} must not be empty`);
      return;
    }
    case 'pattern': {
      if (e.schemaPath.includes('propertyNames')) return; // E.164 keys: reported by hand, with the reason
      const o = optionOf(e.instancePath);
      const format = o?.type === 'string' || o?.type === 'list' ? o.format : undefined;
      if (format) {
        report(
          ctx,
          format.code ?? 'BAD_FORMAT',
          node,
          `${where} ${format.must}, got '${valueText(node)}'`,
          format.hint,
        );
        return;
      }
      report(ctx, 'BAD_NAME', node, `${where}: '${valueText(node)}' is not a flow name (letters, digits, - and _)`);
      return;
    }
    case 'propertyNames':
      if (e.instancePath === '/canary') {
        const name = String(p.propertyName);
        const at = node.kind === 'map' ? entry(node, name) : undefined;
        report(ctx, 'BAD_NAME', at ?? node, `canary: '${clip(name)}' is not a flow name (letters, digits, - and _)`);
      }
      return;
    case 'required':
      // the pairs (auth, admin, account) are checked by hand; the fallback above
      report(ctx, 'MISSING_KEY', key ?? node, `${where} needs '${String(p.missingProperty)}'`);
      return;
    case 'anyOf':
    case 'additionalItems':
      return; // fallback is checked by hand
    default:
      report(ctx, 'TYPE_MISMATCH', key ?? node, `${where} ${e.message ?? 'is not valid'}`);
  }
}

function typeText(t: string): string {
  const names: Record<string, string> = {
    integer: 'an integer',
    string: 'a string',
    object: 'a map',
    boolean: 'true or false',
    array: 'a list',
    number: 'a number',
    null: 'empty',
  };
  return t
    .split(',')
    .filter((x) => x !== 'null')
    .map((x) => names[x] ?? x)
    .join(' or ');
}
