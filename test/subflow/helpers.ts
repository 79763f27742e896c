/**
 * Subflow tests: a directory of flow texts through compileAll (check, link, compile), as
 * the registry and the tools load them.
 */
import { compileAll } from '../../src/registry/files.js';
import type { CompiledFlow } from '../../src/engine/compile.js';
import type { Diagnostic } from '../../src/errors/diagnostic.js';

export function load(files: Record<string, string>): {
  flows: Map<string, CompiledFlow>;
  modules: Map<string, CompiledFlow>;
  diagnostics: Diagnostic[];
} {
  const { flows, report } = compileAll(Object.entries(files).map(([file, text]) => ({ file, text })));
  return {
    flows: new Map(flows.map((f) => [f.name, f])),
    modules: new Map((report.modules ?? []).map((f) => [f.name, f])),
    diagnostics: report.diagnostics,
  };
}

/** `file:line:col CODE` of each diagnostic. */
export function codes(diags: Diagnostic[]): string[] {
  return diags.map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`);
}

export const PIN_CHECK = `version: 2
name: pin-check
module:
  params: { account: required, tries: 3 }
  results: [verified, locked]
  returns: [holder]
vars: { holder_name: "Ann" }
start: ask
steps:
  ask:
    read: { prompt: "Enter the PIN of account {{ vars.account }}.", max_digits: 4 }
    save: pin
    on:
      "1234": done
      default: { retry: 2, then: fail }
      TIMEOUT: { retry: 2, then: fail }
  done:
    return: { result: verified, values: { holder: "{{ vars.holder_name }}" } }
  fail:
    return: locked
`;

export const MAIN = `version: 2
name: main
vars: { account: "12345678" }
start: verify
steps:
  verify:
    subflow:
      flow: pin-check
      with: { account: "{{ vars.account }}" }
    save: { holder_name: holder }
    on: { verified: menu, locked: goodbye }
  menu:
    say: "Hello {{ vars.holder_name }}, account {{ vars.account }}."
    next: goodbye
  goodbye: { hangup: {} }
`;
