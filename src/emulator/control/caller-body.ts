/**
 * A caller script given in a control API body: `caller` (an object) or `caller_text` (YAML/JSON) with `caller_file`.
 */
import { loadCallerScript } from '../caller/load.js';
import { formatScriptErrors, type ScriptError } from '../caller/source.js';
import { defaultCaller, type CallerScript } from '../caller/types.js';

export type CallerBody =
  | { ok: true; script: CallerScript; text: string; file: string }
  | { ok: false; error: { code: 'BAD_CALLER' | 'BAD_REQUEST'; message: string; errors?: ScriptError[] } };

export function callerFromBody(b: Record<string, unknown>): CallerBody {
  if (b.caller !== undefined && b.caller_text !== undefined) return bad('give caller or caller_text, not both');
  if (b.caller_file !== undefined && typeof b.caller_file !== 'string')
    return bad('caller_file must be a string (the file name, for messages)');
  let text: string;
  let file = (b.caller_file as string | undefined) ?? '';
  if (b.caller_text !== undefined) {
    if (typeof b.caller_text !== 'string') return bad('caller_text must be the text of a caller script (YAML or JSON)');
    text = b.caller_text;
    file ||= 'caller script';
  } else if (b.caller !== undefined && b.caller !== null) {
    if (typeof b.caller !== 'object' || Array.isArray(b.caller)) return bad('caller must be a caller script object');
    text = JSON.stringify(b.caller, null, 2);
    file ||= 'caller';
  } else {
    return { ok: true, script: defaultCaller(), text: '', file: '' };
  }
  const r = loadCallerScript(text, file);
  if (!r.ok)
    return { ok: false, error: { code: 'BAD_CALLER', message: formatScriptErrors(r.errors, text), errors: r.errors } };
  return { ok: true, script: r.script, text, file };
}

function bad(message: string): CallerBody {
  return { ok: false, error: { code: 'BAD_REQUEST', message } };
}
