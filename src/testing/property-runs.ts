/** How deep the property tests go, in one place (docs/development.md, "Property tests"). Each property
 *  names two run counts: a quick one for `npm test`, which runs after every change, and a deep one,
 *  selected by REVSYNC_PROPERTY_DEPTH=deep, which CI runs on its own. fast-check draws a new seed on
 *  every run, so the quick runs of every `npm test` and the deep runs of CI add up to more cases over
 *  time than one fixed depth would; a failure prints its seed and path, and the command that replays
 *  exactly that case (REVSYNC_PROPERTY_SEED and REVSYNC_PROPERTY_PATH). */
import { relative } from "node:path";
import fc from "fast-check";
import { expect } from "vitest";
import { shellQuote } from "../shell-quote.js";

export type PropertyDepth = "quick" | "deep";

/** The depth of this run: deep when REVSYNC_PROPERTY_DEPTH says so, quick otherwise; any other word is
 *  an error, so that a typo in CI never quietly runs the quick depth. */
export function propertyDepth(env: NodeJS.ProcessEnv = process.env): PropertyDepth {
  const v = env.REVSYNC_PROPERTY_DEPTH;
  if (v === undefined || v === "" || v === "quick") return "quick";
  if (v === "deep") return "deep";
  throw new Error(`REVSYNC_PROPERTY_DEPTH=${JSON.stringify(v)}: expected quick or deep`);
}

export const PROPERTY_DEPTH: PropertyDepth = propertyDepth();

/** The run count of a property at this run's depth. */
export function runsOf(runs: { quick: number; deep: number }): number {
  return PROPERTY_DEPTH === "deep" ? runs.deep : runs.quick;
}

/** The parameters of fc.assert for a property: its run count at this depth, the seed and path to replay
 *  when REVSYNC_PROPERTY_SEED (and REVSYNC_PROPERTY_PATH) are set, and a failure message that says how
 *  to replay it. */
export function propertyRuns<Ts>(runs: { quick: number; deep: number }): fc.Parameters<Ts> {
  const seed = process.env.REVSYNC_PROPERTY_SEED;
  const path = process.env.REVSYNC_PROPERTY_PATH;
  if (seed !== undefined && !/^-?\d+$/.test(seed)) throw new Error(`REVSYNC_PROPERTY_SEED=${JSON.stringify(seed)}: expected an integer`);
  return {
    numRuns: runsOf(runs),
    ...(seed === undefined ? {} : { seed: Number(seed) }),
    ...(path === undefined || seed === undefined ? {} : { path }),
    reporter: report<Ts>,
  };
}

/** fast-check's own failure message (counterexample, seed, path, the error), and the command that runs
 *  this one test again on exactly the failing case. */
function report<Ts>(details: fc.RunDetails<Ts>): void {
  if (!details.failed) return;
  throw new Error(`${fc.defaultReportMessage(details)}\n\n${replayLine(details)}`, { cause: details.errorInstance });
}

function replayLine<Ts>(details: fc.RunDetails<Ts>): string {
  const { testPath, currentTestName } = expect.getState();
  const file = testPath ? relative(process.cwd(), testPath) : "FILE";
  const name = (currentTestName ?? "").split(" > ").pop() ?? "";
  const env = [
    ...(PROPERTY_DEPTH === "deep" ? ["REVSYNC_PROPERTY_DEPTH=deep"] : []),
    `REVSYNC_PROPERTY_SEED=${details.seed}`,
    ...(details.counterexamplePath === null ? [] : [`REVSYNC_PROPERTY_PATH=${shellQuote(details.counterexamplePath)}`]),
  ];
  const pattern = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return `Replay this case: ${env.join(" ")} npx vitest run ${shellQuote(file)} -t ${shellQuote(`${pattern}$`)}`;
}
