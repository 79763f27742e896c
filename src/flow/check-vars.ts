/**
 * Names read by templates and conditions: `vars.x` must be set somewhere in the flow
 * (vars:, save:, set:), `call.x` must be a call field. Both are warnings (UNKNOWN_VARIABLE).
 */
import type { Step } from './model.js';
import { type Ctx, didYouMean, report } from './check-context.js';
import { spanIn } from './spans.js';

/** The call fields templates and conditions see (docs/flow-language.md, Variables). */
export const CALL_FIELDS = [
  'callid',
  'caller',
  'caller_name',
  'called',
  'app',
  'cdr_field',
  'request_hash',
  'date_started',
  'status',
  'variables',
] as const;

export function checkVarRefs(ctx: Ctx, initial: string[], steps: Record<string, Step>): void {
  const written = new Set([...initial, ...ctx.declared]);
  // a foreach's item and index (even of a loop step with errors of its own)
  for (const n of ctx.loops?.names ?? []) written.add(n.name);
  for (const s of Object.values(steps)) {
    if (s.kind === 'command' && s.save) written.add(s.save);
    if (s.kind === 'set') for (const a of s.assign) written.add(a.name);
    if (s.kind === 'subflow') for (const n of Object.keys(s.save)) written.add(n);
  }
  const seen = new Set<string>();
  const hints = new Map<string, string>();
  const unknownVar = (name: string): string => {
    let hint = hints.get(name);
    if (hint === undefined) {
      hint =
        didYouMean(name, written, ctx.suggest) ??
        'Set it with vars:, save: or set:, or guard it with `| default:` in a template or has(vars.x) in a condition.';
      hints.set(name, hint);
    }
    return hint;
  };
  for (const r of ctx.refs) {
    const key = `${r.root}.${r.name}@${r.at.pos.line}:${r.at.pos.col}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // carets under the name, not the whole (possibly long) template
    const at = (r.offset !== undefined && r.at.kind === 'scalar' && spanIn(r.at, r.offset, r.length ?? 0)) || r.at;
    if (r.root === 'vars' && !written.has(r.name)) {
      if (ctx.loops?.unnamed) continue;
      report(
        ctx,
        'UNKNOWN_VARIABLE',
        at,
        `vars.${r.name} is read here but nothing sets it (no vars:, save:, set: or foreach of '${r.name}')`,
        unknownVar(r.name),
      );
    } else if (r.root === 'env') {
      const keys = ctx.v2.envKeys;
      if (!keys?.has(r.name))
        report(
          ctx,
          'UNKNOWN_ENV_KEY',
          at,
          `env.${r.name} is read here ` +
            `but ${keys ? `no environment defines '${r.name}'` : 'the flow has no environments:'}`,
          (keys && didYouMean(r.name, keys, ctx.suggest)) ?? 'Define it in every environment of environments:.',
        );
    } else if (r.root === 'call' && r.name === 'language' && ctx.v2.languages) {
      // the call's language, in a flow with languages:
    } else if (r.root === 'call' && !(CALL_FIELDS as readonly string[]).includes(r.name)) {
      report(
        ctx,
        'UNKNOWN_VARIABLE',
        at,
        `call.${r.name} is not a call field`,
        didYouMean(r.name, CALL_FIELDS) ?? `Call fields: ${CALL_FIELDS.join(', ')}.`,
      );
    }
  }
}
