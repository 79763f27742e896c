import type { CodeInfo } from './types.js';

/** Problems found when loading a flows directory as a whole. */
export const REGISTRY_CODES: readonly CodeInfo[] = [
  { code: 'DUPLICATE_FLOW_NAME', severity: 'error', title: 'Two flow files declare the same name; the second one is refused.', hint: 'Give each flow a distinct `name:` (or rename the file when the name comes from it).' },
  { code: 'FLOWS_DIR_MISSING', severity: 'error', title: 'The flows directory does not exist or cannot be read.', hint: 'Create it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.' },
  { code: 'UNREADABLE_FILE', severity: 'error', title: 'A flow or config file could not be read.', hint: 'Check that the path exists and is readable.' },
  { code: 'UNKNOWN_ROUTE_FLOW', severity: 'error', title: 'A route in callscript.yaml names a flow that is not loaded.', hint: 'Use the name of a loaded flow (see GET /health), or fix the errors of the flow it names.' },
];
