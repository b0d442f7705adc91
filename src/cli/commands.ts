import type { Command } from "commander";
import type { Output, Redactor } from "./output.js";

export type Runner = <F extends object>(
  fn: (flags: F, out: Output, redactor: Redactor, args: string[]) => Promise<number>,
) => (...args: unknown[]) => Promise<void>;

/** Registers the service-facing commands; each loads its implementation only when it runs. */
export function register(_program: Command, _run: Runner): void {}
