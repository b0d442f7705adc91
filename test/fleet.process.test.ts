import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { useFleet } from "../src/testing/fleet.js";
import { BIN, DEMO_ENV } from "../src/testing/helpers.js";

// The fleet's progress line, drawn only on a terminal: the CLI as a process of its own under `script`
// (the fleet's reports, in process: fleet.e2e.test.ts).
const fx = useFleet();

describe("a fleet's run on a terminal", () => {
  it("the progress line names the environments in flight, at most --parallel of them", async () => {
    // Slow enough that the line is drawn while they are in flight.
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 100, path: "/tenants/" });
    // Not in CI (the suite may run there): ora draws no line where CI is set at all.
    const env: NodeJS.ProcessEnv = { ...process.env, ...DEMO_ENV, NO_COLOR: "1" };
    delete env.CI;
    const out = await new Promise<string>((resolve) => {
      const child = spawn("script", ["-qfec", `stty cols 200; ${process.execPath} ${BIN} drift --envs t01,t02,t07,t08 --parallel 2`, "/dev/null"], {
        cwd: fx.repo,
        env,
      });
      let text = "";
      child.stdout.on("data", (d: Buffer) => (text += d.toString()));
      child.on("close", () => resolve(text));
    });
    // The line's text ends where the terminal's next code (ESC) or a new line starts.
    const ESC = String.fromCharCode(27);
    const lines = [...out.matchAll(/Checking drift in 4 environments: (\d) done; now ([^\r\n]*)/g)].map((m) => [m[1], m[2]?.split(ESC)[0]?.trim()]);
    expect(lines.length).toBeGreaterThan(0);
    const inFlight = lines.map(([, now]) => (now ?? "").split(", ").map((n) => n.replace(/ \(.*$/, "")));
    expect(inFlight.some((names) => names.includes("t01") || names.includes("t02"))).toBe(true);
    expect(inFlight.every((names) => names.length <= 2 && names.every((n) => ["t01", "t02", "t07", "t08"].includes(n)))).toBe(true);
    expect(out).toContain("Summary of revsync drift across 4 environments: 0 failed, 2 drifted, 2 without drift.");
  });
});
