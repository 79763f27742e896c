export type Severity = 'error' | 'warning';

/** A problem found in a flow or config file: data, never thrown. */
export interface Diagnostic {
  code: string;
  severity: Severity;
  message: string;
  file: string;
  line: number; // 1-based
  column: number; // 1-based
  hint?: string;
  /** Where it ends, for editors and code frames (optional). */
  endLine?: number;
  endColumn?: number;
}

export function hasErrors(diags: readonly Diagnostic[]): boolean {
  return diags.some((d) => d.severity === 'error');
}
