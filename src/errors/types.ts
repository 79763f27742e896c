import type { Severity } from './diagnostic.js';

/** One entry of the error catalogue (documented in docs/errors.md). */
export interface CodeInfo {
  code: string;
  /** Diagnostics (flow and config files): their severity. */
  severity?: Severity;
  /** HTTP errors: the status answered. */
  http?: number;
  /** One line: what it means. */
  title: string;
  /** What to do about it. */
  hint: string;
}
