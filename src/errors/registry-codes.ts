import type { CodeInfo } from './types.js';

/** Problems found when loading a flows directory as a whole. */
export const REGISTRY_CODES: readonly CodeInfo[] = [
  {
    code: 'DUPLICATE_FLOW_NAME',
    severity: 'error',
    title:
      'Two flow files declare the same name; the file admitted first keeps it (one already serving the flow, ' +
      'else the first by file name), the other is refused.',
    hint: 'Give each flow a distinct `name:` (or rename the file when the name comes from it).',
  },
  {
    code: 'FLOWS_DIR_MISSING',
    severity: 'error',
    title: 'The flows directory does not exist or cannot be read.',
    hint: 'Create it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.',
  },
  {
    code: 'UNREADABLE_FILE',
    severity: 'error',
    title:
      'A flow or config file could not be read: missing, not readable, a symbolic link out of the flows ' +
      'directory, or not a regular file (a FIFO).',
    hint: 'Check that the path exists and is readable.',
  },
  {
    code: 'UNKNOWN_ROUTE_FLOW',
    severity: 'error',
    title: 'A route in callscript.yaml names a flow that is not loaded.',
    hint: 'Use the name of a loaded flow (see GET /health), or fix the errors of the flow it names.',
  },
  {
    code: 'FILES_UNSTABLE',
    severity: 'warning',
    title: 'A reload found the flow files still changing (two reads did not agree); nothing was reloaded.',
    hint: 'Logged, not an error in a file: the next change (or POST /admin/reload) reloads once the files are written.',
  },
  {
    code: 'CHECK_TIMEOUT',
    severity: 'error',
    title:
      "A reload's flow checker gave no answer for 30 s: the changed files are refused, not checked again on " +
      'the main thread (where they would hold every call).',
    hint:
      'A flow checks in about a second per megabyte: one that takes this long is hostile or a checker bug. Its ' +
      'previous version keeps serving. Report it with the file.',
  },
  {
    code: 'CHECK_WORKER_FAILED',
    severity: 'warning',
    title:
      "A reload's flow checker worker thread crashed, exited or stopped answering; that reload checked the " +
      'changed files on the main thread.',
    hint:
      'Logged with the reason; calls waited while those files were checked. The next reload starts a new ' +
      'worker. If it keeps happening, report it with the flow files that were changed.',
  },
  {
    code: 'FLOW_PUBLISHED',
    title: 'A reload published a new version of a flow; new calls get it, live calls stay on theirs.',
    hint: 'Logged with the flow, the new and the replaced version; FLOW_IMPACT follows with the steps changed.',
  },
  {
    code: 'FLOW_IMPACT',
    title: 'The impact report of a publish: steps changed, added, removed, and live calls in changed or removed steps.',
    hint: 'Those calls finish on their version. The report is also in GET /admin/flows/:name (impact).',
  },
  {
    code: 'FLOW_DELETED',
    severity: 'warning',
    title: 'A flow file is gone: the flow takes no new calls; its live calls finish on their version.',
    hint: 'Restore the file to serve the flow again.',
  },
  {
    code: 'CONFIG_NEEDS_RESTART',
    severity: 'warning',
    title: 'The config file changed a setting that only applies at start (port, host, flows_dir, auth, admin, limits).',
    hint: 'Routes and canary apply at once; restart callscript serve for the others.',
  },
];
