/** Types of source-hash.mjs, for the TypeScript that imports it. */
export function buildInputs(root: string): string[];
export function sourceHash(root: string): Promise<string>;
