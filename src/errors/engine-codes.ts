import type { CodeInfo } from './types.js';

export const ENGINE_CODES: readonly CodeInfo[] = [
];
