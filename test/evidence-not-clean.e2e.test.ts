import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { commitAll } from "../src/testing/git-commit.js";
import { cli, DEMO_ENV, removeDir, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// An evidence record of a tree that was not clean says why: which paths, what became of each, and which
// of them revsync read as policy; apply warns of the policy file it plans from uncommitted.
let emu: Emu;
let repo: string;
beforeAll(async () => {
  emu = await startEmu("demo");
  repo = tempRepo(emu.url);
  commitAll(repo);
});
afterAll(async () => {
  removeDir(repo);
  await emu.close();
});

it("the record lists the paths that were not clean, marks the policy file, evidence show prints them escaped, verify holds", async () => {
  appendFileSync(join(repo, "policies", "tenant-configuration.yaml"), "  # an edit not committed\n");
  writeFileSync(join(repo, "notes.txt"), "notes");
  writeFileSync(join(repo, "plan.json"), "{}");
  writeFileSync(join(repo, "odd\u001b[31m.txt"), "");
  const env = DEMO_ENV;
  const r = await cli(["apply", "--auto-approve", "--evidence", "ev", "--target", "tenant-configuration/Default Tenant Configuration"], { cwd: repo, env });
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(
    /Warning: the policy files differ from commit [0-9a-f]{12}: policies\/tenant-configuration\.yaml \(modified\); this apply plans from them/,
  );
  const file = readdirSync(join(repo, "ev")).find((f) => f.endsWith(".json"))!;
  const record = JSON.parse(readFileSync(join(repo, "ev", file), "utf8"));
  expect(record.git.clean).toBe(false);
  // The files revsync reads as policy first, then the others, each in path order.
  expect(record.git.not_clean).toEqual([
    { path: "policies/tenant-configuration.yaml", what: "modified", policy: true },
    { path: "notes.txt", what: "untracked", policy: false },
    { path: "odd\u001b[31m.txt", what: "untracked", policy: false },
    { path: "plan.json", what: "untracked", policy: false },
  ]);
  expect(record.git.not_clean_total).toBe(4);
  const show = await cli(["evidence", "show", "ev"], { cwd: repo, env });
  expect(show.code).toBe(0);
  const line = show.stdout.split("\n").find((l) => l.startsWith("  not clean"));
  expect(line).toBe(
    "  not clean   policies/tenant-configuration.yaml (modified, a policy file), notes.txt (untracked), odd\\u001B[31m.txt (untracked), plan.json (untracked)",
  );
  const md = await cli(["evidence", "show", "ev", "--format", "markdown"], { cwd: repo, env });
  expect(md.stdout).toContain("policies/tenant-configuration.yaml (modified, a policy file)");
  expect(md.stdout).not.toContain("\u001b");
  expect((await cli(["evidence", "verify", "ev"], { cwd: repo, env })).code).toBe(0);
});

it("a values file outside the policies folder, not committed: apply warns of it and the record marks it a policy file", async () => {
  await emu.reset();
  const dir = tempRepo(emu.url);
  try {
    commitAll(dir);
    // The batch's values move to a folder beside policies/, and the move is not committed.
    const hw = join(dir, "policies", "ssp", "hardware.yaml");
    mkdirSync(join(dir, "prices"), { recursive: true });
    writeFileSync(join(dir, "prices", "hw-h1.csv"), readFileSync(join(dir, "policies", "ssp", "values", "hardware-fy26-h1.csv")));
    writeFileSync(hw, readFileSync(hw, "utf8").replace("values/hardware-fy26-h1.csv", "../../prices/hw-h1.csv"));
    const r = await cli(["apply", "--auto-approve", "--evidence", "ev", "--target", "ssp/Hardware SSP/batch/FY26-H1"], { cwd: dir, env: DEMO_ENV });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/differ from commit [0-9a-f]{12}: .*prices\/hw-h1\.csv \(untracked\)/);
    const file = readdirSync(join(dir, "ev")).find((f) => f.endsWith(".json"))!;
    const record = JSON.parse(readFileSync(join(dir, "ev", file), "utf8"));
    expect(record.git.not_clean).toContainEqual({ path: "prices/hw-h1.csv", what: "untracked", policy: true });
    expect(record.git.not_clean).toContainEqual({ path: "policies/ssp/hardware.yaml", what: "modified", policy: true });
  } finally {
    removeDir(dir);
  }
});
