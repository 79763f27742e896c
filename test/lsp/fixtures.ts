/**
 * The flows of the completion and hover tests: a version 2 flow that uses most names a flow declares (steps, vars,
 * a calendar, prompts and languages, environments, a secret) and enters a module of its directory, and the module.
 * Both check clean. `at(text)` finds the cursor mark `‸` in a text: the text without it and the mark's position.
 */
import { pathToUri } from '../../src/lsp/uris.js';

export const BANK = `version: 2
name: bank
start: welcome
secrets: [BANK_TOKEN]
vars:
  tries: 0
calendars:
  office:
    timezone: Europe/London
    weekly: { mon-fri: "09:00-17:00" }
languages:
  en-GB: { voice: TTS_EN-GB_SERENA }
  fr-FR: { voice: TTS_FR-FR_AUDREY }
prompts:
  hello:
    en-GB: "Hello."
    fr-FR: "Bonjour."
environments:
  staging: { api: "https://staging.example" }
  production: { api: "https://api.example" }
steps:
  welcome:
    say: { prompt: hello }
    next: hours
  hours:
    calendar: office
    on: { open: menu, closed: goodbye }
  menu:
    read: { prompt: "Press 1.", max_digits: 1 }
    save: choice
    on: { "1": verify, TIMEOUT: goodbye, default: menu }
  verify:
    subflow: { flow: pin-check, with: { account: "{{ vars.choice }}" } }
    save: { holder: name }
    on: { verified: lookup, locked: goodbye }
  lookup:
    http: { url: "{{ env.api }}/balance", headers: { Authorization: "Bearer {{ secrets.BANK_TOKEN }}" } }
    on: { ok: goodbye, default: goodbye }
  goodbye:
    say: "Goodbye {{ vars.holder }}."
    next: end
  end:
    hangup: {}
`;

export const PIN_CHECK = `version: 2
name: pin-check
module:
  params: { account: required, tries: 3 }
  results: [verified, locked]
  returns: [name]
start: ask
steps:
  ask:
    read: { prompt: "PIN for {{ vars.account }}?", max_digits: 4 }
    on: { "1234": done, default: fail }
  done:
    return: { result: verified, values: { name: "Ann" } }
  fail:
    return: locked
`;

export const MARK = '‸';

/** `text` with its one cursor mark taken out, and the mark's position (0-based). */
export function at(text: string): { text: string; line: number; character: number } {
  const i = text.indexOf(MARK);
  if (i < 0 || text.indexOf(MARK, i + 1) >= 0) throw new Error('a text needs exactly one cursor mark');
  const before = text.slice(0, i).split('\n');
  return { text: text.replace(MARK, ''), line: before.length - 1, character: before.at(-1)!.length };
}

/** `base` with `from` (which must occur once) replaced by `to`. */
export function edit(base: string, from: string, to: string): string {
  const i = base.indexOf(from);
  if (i < 0 || base.indexOf(from, i + 1) >= 0) throw new Error(`'${from}' must occur once`);
  return base.replace(from, to);
}

export const doc = (path: string, line: number, character: number) => ({
  textDocument: { uri: pathToUri(path) },
  position: { line, character },
});
