import type { CodeInfo } from './types.js';

export const HTTP_CODES: readonly CodeInfo[] = [
];
