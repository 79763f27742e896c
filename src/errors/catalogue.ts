/**
 * The one catalogue of stable error codes. Each stage owns a part; this module joins
 * them and is what docs/errors.md must document, code for code (see test/errors.test.ts).
 */
import type { CodeInfo } from './types.js';
import { FLOW_CODES } from './flow-codes.js';
import { ENGINE_CODES } from './engine-codes.js';
import { HTTP_CODES } from './http-codes.js';
import { REGISTRY_CODES } from './registry-codes.js';

export type { CodeInfo } from './types.js';

export const CATALOGUE: readonly CodeInfo[] = [...FLOW_CODES, ...REGISTRY_CODES, ...ENGINE_CODES, ...HTTP_CODES];

const byCode = new Map(CATALOGUE.map((c) => [c.code, c]));

export function codeInfo(code: string): CodeInfo {
  const info = byCode.get(code);
  if (!info) throw new Error(`unknown error code ${code}: add it to src/errors/`);
  return info;
}

/** The catalogue by section, in the order docs/errors.md presents it. */
export const CATALOGUE_SECTIONS: Record<string, readonly CodeInfo[]> = {
  'Flow and config diagnostics': FLOW_CODES,
  'Loading a flows directory': REGISTRY_CODES,
  'Engine (logged while a call runs)': ENGINE_CODES,
  'HTTP errors': HTTP_CODES,
};
