import type { CodeInfo } from './types.js';

export const FLOW_CODES: readonly CodeInfo[] = [
];
