// Types of chaos-lib.mjs, for test/chaos.e2e.test.ts.
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}
export interface EmulatorProcess {
  url: string;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}
export interface SeedRow {
  seed: number;
  resources: number;
  requests: number;
  faults: number;
  applies: number;
  exit_codes: string;
  final_plan: string;
  converged: boolean;
  duplicates: number;
  seconds: string;
  detail: string;
}
export const ROOT: string;
export function cli(args: string[], cwd: string, extraEnv?: Record<string, string>, signal?: { name: NodeJS.Signals; ms: number }): Promise<CliRun>;
export function chaosRepo(url: string, formulas?: number, uploads?: number): string;
export function startEmulatorProcess(args?: string[]): Promise<EmulatorProcess>;
export function chaosFaults(seed: number): object;
export function runSeed(seed: number, opts?: { formulas?: number; uploads?: number }): Promise<SeedRow>;
export function token(url: string, user?: string, realm?: string): Promise<string>;
