import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { elementsOf, renderGfm } from "../src/testing/gfm.js";
import { IN_STEP, ORDER, REALMS, useFleet } from "../src/testing/fleet.js";
import { cli, DEMO_ENV, removeDir } from "../src/testing/helpers.js";

// The fleet of src/testing/fleet.ts: 12 environments on one emulator in this process, one of them down.
const fx = useFleet();

const run = (args: string[], env: Record<string, string> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });
const json = (text: string): any => JSON.parse(text);
const tokenRequests = async (): Promise<string[]> =>
  (await fx.emu.admin<{ method: string; path: string }[]>("GET", "requests"))
    .filter((r) => r.path.includes("/openid-connect/token"))
    .map((r) => r.path.split("/")[3] ?? "");

describe("drift across 12 environments, one of them unreachable", () => {
  it("text: each environment's report in revsync.yaml's order, then the summary, failures first; exit 1", async () => {
    const r = await run(["drift", "--all-envs"]);
    expect(r.code).toBe(1);
    const at = ORDER.map(
      (n) => r.stdout.indexOf(n === "down" ? 'Failed: environment "down"' : `Environment "${n}"`) + r.stdout.indexOf(`Drift in environment "${n}"`) + 1,
    );
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const summary = r.stdout.slice(r.stdout.indexOf("Summary of revsync drift across 12 environments: 1 failed, 5 drifted, 6 without drift."));
    const rows = summary.split("\n").slice(1, 13);
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "down failed",
      ...REALMS.filter((n) => !IN_STEP.has(n)).map((n) => `${n} drift`),
      ...REALMS.filter((n) => IN_STEP.has(n)).map((n) => `${n} no`),
    ]);
    expect(rows[0]).toContain("connection refused by 127.0.0.1:9: nothing listens there");
    expect(r.stderr).toContain("Error: down: POST token endpoint failed (no answer): connection failed: connection refused by 127.0.0.1:9");
  });

  it("JSON: every environment's entry names it, in order, the failed one with its error; each tenant signed in once, the stopped one tried once", async () => {
    const r = await run(["drift", "--all-envs", "--format", "json", "--verbose"]);
    expect(r.code).toBe(1);
    const out = json(r.stdout);
    expect(out).toMatchObject({ format_version: "1", command: "drift", summary: { environments: 12, failed: 1, changes: 5, clean: 6 } });
    expect(out.environments.map((e: any) => [e.environment, e.command, e.status])).toEqual(
      ORDER.map((n) => [n, "drift", n === "down" ? "failed" : IN_STEP.has(n) ? "clean" : "changes"]),
    );
    expect(out.environments[4].error).toMatchObject({ kind: "service", status: 0, path: "token endpoint" });
    expect(out.environments[ORDER.indexOf("t07")].drift.length).toBeGreaterThan(0);
    // Each environment its own sign-in, to its own realm; the stopped tenant's sign-in not tried again.
    expect((await tokenRequests()).sort()).toEqual(REALMS);
    expect(r.stderr.match(/^down: http POST \/auth\/realms\/…\/token failed: connection refused/gm)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/^down: .*retry/m);
    expect(r.stderr).toMatch(/^t07: http GET \/apis\/policy-sets\/v1\/policy\/ssp 200 /m);
  });

  it("markdown: one comment within the size limit, every environment in the table, failures first, a section for each that drifted", async () => {
    const r = await run(["drift", "--all-envs", "--format", "markdown", "--parallel", "3"]);
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBeLessThanOrEqual(60_000);
    expect(r.stdout.startsWith("<!-- revsync-fleet:drift -->\n### revsync drift across 12 environments\n\n1 failed, 5 drifted, 6 without drift.\n")).toBe(true);
    const html = renderGfm(r.stdout);
    const rows = elementsOf(elementsOf(html, "tbody")[0] ?? "", "tr");
    expect(rows).toHaveLength(12);
    expect(rows[0]).toMatch(/<code>down<\/code>.*<strong>failed<\/strong>.*connection refused by 127\.0\.0\.1:9/s);
    expect(elementsOf(html, "summary").filter((s) => s.includes(": drift, "))).toEqual(
      REALMS.filter((n) => !IN_STEP.has(n)).map((n) => `<code>${n}</code>: drift, 1 changed, 1 missing, 4 batch statuses`),
    );
    expect(r.stdout).toContain("### revsync drift in `t07`");
  });
});

describe("plan and policy tests across the fleet", () => {
  it("plan --envs … --out DIR: one saved plan per environment; --detailed-exitcode aggregates", async () => {
    const r = await run(["plan", "--envs", "t01,down,t07", "--out", "plans", "--detailed-exitcode", "--format", "json"]);
    expect(r.code).toBe(1);
    expect(readdirSync(join(fx.repo, "plans")).sort()).toEqual(["t01.plan.json", "t07.plan.json"]);
    const saved = json(readFileSync(join(fx.repo, "plans", "t07.plan.json"), "utf8"));
    const entry = json(r.stdout).environments.find((e: any) => e.environment === "t07");
    expect(saved.checksum).toBe(entry.checksum);
    expect(r.stderr).toContain(
      "Saved 2 plans in plans, one per environment (<environment>.plan.json). Apply one exactly with: revsync apply plans/t01.plan.json",
    );
    // A saved plan of the fleet applies to its own tenant alone.
    expect((await run(["show", "plans/t07.plan.json"])).stdout).toContain('environment "t07"');
    expect((await run(["plan", "--envs", "t07,t01", "--detailed-exitcode", "--quiet"])).code).toBe(2);
    expect((await run(["plan", "--envs", "t01,t02", "--detailed-exitcode", "--quiet"])).code).toBe(0);
    expect((await run(["plan", "--envs", "t07,t01", "--quiet"])).code).toBe(0);
    removeDir(join(fx.repo, "plans"));
  });

  it("test --live --all-envs: each environment's cases against its own service's policies; markdown lists each failing one", async () => {
    const r = await run(["test", "--live", "--all-envs", "--format", "markdown"]);
    expect(r.code).toBe(1);
    const html = renderGfm(r.stdout);
    const rows = elementsOf(elementsOf(html, "tbody")[0] ?? "", "tr");
    expect(rows.map((row) => /<code>(\w+)<\/code><\/td>\s*<td>(?:<strong>)?([a-z ]+)/.exec(row)?.slice(1, 3).join(" "))).toEqual([
      "down failed",
      ...REALMS.filter((n) => !IN_STEP.has(n)).map((n) => `${n} tests failed`),
      ...REALMS.filter((n) => IN_STEP.has(n)).map((n) => `${n} passed`),
    ]);
    expect(html).toContain("<code>US appliance</code> (tests/cases.yaml:4): ");
    // One environment alone: its JSON names it (a matrix job's output), its markdown says the same.
    const one = await run(["test", "--live", "--env", "t07", "--format", "json"]);
    expect(json(one.stdout)).toMatchObject({ environment: "t07", summary: { passed: 0, failed: 1 } });
    const md = await run(["test", "--live", "--env", "t07", "--format", "markdown"]);
    expect(md.stdout).toMatch(
      /^<!-- revsync-test:t07 -->\n### revsync test in `t07`\n\n\*\*Policy tests failed\*\* against the service's policies in t07: 0 passed, 1 failed\.\n/,
    );
    expect(md.code).toBe(1);
  });
});

describe("revsync summary of a CI matrix's outputs", () => {
  it("merges single environments' JSON (a failed run's included) into the fleet's summary; an expected environment without output is a failure", async () => {
    const outputs = join(fx.repo, "outputs");
    mkdirSync(outputs, { recursive: true });
    for (const env of ["t01", "t07", "down"]) {
      const r = await run(["drift", "--env", env, "--format", "json"]);
      expect(r.code).toBe(env === "down" ? 1 : env === "t07" ? 2 : 0);
      writeFileSync(join(outputs, `drift-${env}.json`), r.stdout);
    }
    expect(json(readFileSync(join(outputs, "drift-down.json"), "utf8"))).toMatchObject({ command: "drift", environment: "down", error: { kind: "service" } });
    const files = ["outputs/drift-t01.json", "outputs/drift-t07.json", "outputs/drift-down.json"];
    const text = await run(["summary", ...files]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("Summary of revsync drift across 3 environments: 1 failed, 1 drifted, 1 without drift.");
    // Each environment's report first, as the run across environments prints them.
    expect(text.stdout.indexOf('Environment "t01"')).toBeLessThan(text.stdout.indexOf('Drift in environment "t07"'));
    expect(text.stdout).toContain('Failed: environment "down": POST token endpoint failed');
    // The same summary as the fleet's own run, row for row.
    const tableOf = (md: string): string => elementsOf(renderGfm(md), "tbody")[0] ?? "";
    const fleet = await run(["drift", "--envs", "t01,t07,down", "--format", "markdown"]);
    const summed = await run(["summary", ...files, "--format", "markdown"]);
    expect(tableOf(summed.stdout)).toBe(tableOf(fleet.stdout));
    // Expected environments: t08 has no output, so it is a failure of its own, listed in --envs' order.
    const expected = json((await run(["summary", ...files, "--envs", "t08,t07,t01,down", "--format", "json"])).stdout);
    expect(expected.environments.map((e: any) => [e.environment, e.status, e.file])).toEqual([
      ["t08", "failed", undefined],
      ["t07", "changes", "outputs/drift-t07.json"],
      ["t01", "clean", "outputs/drift-t01.json"],
      ["down", "failed", "outputs/drift-down.json"],
    ]);
    // A fleet's own JSON sums up as its environments do; without failures the exit is the drift's.
    writeFileSync(join(outputs, "fleet.json"), (await run(["drift", "--envs", "t02,t09", "--format", "json"])).stdout);
    expect((await run(["summary", "outputs/fleet.json", "outputs/drift-t01.json", "--quiet"])).code).toBe(2);
    removeDir(outputs);
  });

  it("plans: --detailed-exitcode as plan's; a plan edited after revsync wrote it, or two outputs of one environment, are refused naming the files", async () => {
    const plan = (await run(["plan", "--env", "t08", "--format", "json"])).stdout;
    writeFileSync(join(fx.repo, "plan-t08.json"), plan);
    writeFileSync(join(fx.repo, "plan-t08-again.json"), plan);
    writeFileSync(join(fx.repo, "plan-t09.json"), (await run(["plan", "--env", "t09", "--format", "json"])).stdout);
    expect((await run(["summary", "plan-t08.json", "plan-t09.json", "--quiet"])).code).toBe(0);
    expect((await run(["summary", "plan-t08.json", "plan-t09.json", "--detailed-exitcode", "--quiet"])).code).toBe(2);
    const twice = await run(["summary", "plan-t08.json", "plan-t08-again.json"]);
    expect(twice.stderr).toContain('Error: environment "t08" (plan) is in two outputs: plan-t08.json and plan-t08-again.json');
    writeFileSync(join(fx.repo, "plan-t09.json"), plan.replace('"MJ-CONTRA-100"', '"MJ-CONTRA-999"').replace('"t08"', '"t09"'));
    const edited = await run(["summary", "plan-t08.json", "plan-t09.json"]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain("Error: plan-t09.json was changed after revsync wrote it (its checksum does not match), so it is not summed up");
    const notOurs = await run(["summary", "revsync.yaml"]);
    expect(notOurs.stderr).toContain("Error: revsync.yaml is not a JSON output of revsync: it is not valid JSON");
    for (const f of ["plan-t08.json", "plan-t08-again.json", "plan-t09.json"]) removeDir(join(fx.repo, f));
  });
});

describe("a run across environments, asked wrongly", () => {
  it("refuses before anything is read, naming the flag", async () => {
    const cases: [string[], string][] = [
      [["drift", "--all-envs", "--env", "t01"], "Error: --env and --all-envs both given"],
      [["drift", "--all-envs", "--envs", "t01"], "Error: --all-envs and --envs both given"],
      [["plan", "--envs", "t01,nope"], 'Error: no environment "nope" in revsync.yaml'],
      [["drift", "--all-envs", "--parallel", "0"], 'Error: --parallel must be a whole number from 1 to 64, got "0"'],
      [["test", "--all-envs"], "Error: --all-envs without --live: offline, revsync test already runs git's policies with each environment's vars"],
      [["test", "--live", "--envs", "t01,t02", "--format", "junit"], "Error: --format junit names one environment's cases"],
      [["plan", "--all-envs", "--out", "revsync.yaml"], "Error: --out revsync.yaml is a file: with several environments --out names a folder"],
    ];
    for (const [args, said] of cases) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(said);
    }
    expect(await fx.emu.admin("GET", "requests")).toEqual([]);
  });
});
