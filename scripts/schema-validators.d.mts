/** Types of schema-validators.mjs, for the TypeScript that imports it. */
export interface Check {
  file: string;
  schema: string;
  /** Whether the file must pass. */
  valid: boolean;
}
export interface Result extends Check {
  passed: boolean;
  said: string;
}
export interface Diagnostic {
  message: string;
  range: { start: { line: number; character: number } };
}
export const ROOT: string;
export function examples(): Check[];
export function typos(dir: string): Check[];
export function outputs(planFile: string, evidenceFile: string, dir: string, reportFile?: string): Check[];
export function oneDocumentEach(checks: Check[], dir: string): Check[];
export function ajv(checks: Check[]): { results: Result[]; schemaNotes: string[] };
export function yamlLanguageServer(
  workspace: string,
  schemas?: Record<string, string[]>,
): Promise<{ open(file: string, text?: string): Promise<Diagnostic[]>; close(): Promise<void> }>;
export function python(pythonBin: string, checks: Check[]): Result[];
