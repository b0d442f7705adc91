import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { comparedChecksum } from "../promotion/check.js";
import { commitAll } from "../testing/git-commit.js";
import { promoteFromAtCommits, promoteFromIn, promotionProblems } from "./promotion.js";
import type { EvidenceRecord } from "./record.js";

const promoted = { status: "promoted", from: "sandbox", action: "update", compared: { carves_allocation: true } } as const;
const change = (outcome: string, promotion?: object) =>
  ({ address: "tenant-configuration/T", action: "update", outcome, ...(promotion ? { promotion } : {}) }) as unknown as EvidenceRecord["changes"][number];
const record = (changes: EvidenceRecord["changes"], promotion?: Partial<NonNullable<EvidenceRecord["promotion"]>>) =>
  ({
    environment: "production",
    git: { commit: "0123456789abcdef0123" },
    changes,
    ...(promotion ? { promotion: { from: "sandbox", read_at: "2026-01-01T00:00:00Z", compared_checksum: comparedChecksum(changes), ...promotion } } : {}),
  }) as unknown as EvidenceRecord;

describe("evidence verify's promotion", () => {
  it("flags a record of a promote_from environment without its facts, and none of another environment", () => {
    expect(promotionProblems(record([change("done")]), "sandbox")).toEqual([
      "promotion: environment production receives its changes from sandbox (promote_from in revsync.yaml at commit 0123456789ab), and this record holds no promotion facts (the source, the commit, what was compared): it was applied without promotion",
    ]);
    expect(promotionProblems(record([change("done")]), undefined)).toEqual([]);
    expect(promotionProblems(record([change("done", promoted)], {}), "sandbox")).toEqual([]);
  });

  it("flags a write that landed though blocked for promotion or without its facts, failed tests, another source, and facts that do not make their checksum", () => {
    const blocked = record([change("done", { ...promoted, status: "blocked" })], {});
    expect(promotionProblems(blocked, "sandbox")).toEqual(["promotion: tenant-configuration/T (update) landed though the plan blocked it for promotion"]);
    expect(promotionProblems(record([change("confirmed")], {}), "sandbox")).toEqual([
      "promotion: tenant-configuration/T (update) landed without the plan's promotion facts",
    ]);
    const failing = record([change("done", promoted)], { tests: { cases: 1, contracts: 0, failed: ['case "x" (tests/a.yaml:3): no'] } });
    expect(promotionProblems(failing, "sandbox")).toEqual([
      'promotion: writes landed though the policy tests failed live in sandbox: case "x" (tests/a.yaml:3): no',
    ]);
    expect(promotionProblems(record([change("skipped", promoted)], { tests: { cases: 1, contracts: 0, failed: ["x"] } }), "sandbox")).toEqual([]);
    expect(promotionProblems(record([change("done", promoted)], {}), "uat")).toEqual([
      "promotion: promoted from sandbox, while revsync.yaml at its commit names uat",
    ]);
    const edited = record([change("done", promoted)], { compared_checksum: `sha256:${"0".repeat(64)}` });
    expect(promotionProblems(edited, "sandbox")[0]).toMatch(/^promotion: its changes' promotion facts do not make its compared_checksum/);
  });

  it("reads each environment's promote_from from revsync.yaml's text, and nothing from text that is not YAML", () => {
    expect(promoteFromIn("environments:\n  sandbox: { base_url: x }\n  production: { base_url: y, promote_from: sandbox }\n")).toEqual({
      production: "sandbox",
    });
    expect(promoteFromIn("environments: [")).toEqual({});
  });
});

describe("revsync.yaml's promote_from at the commits records name", () => {
  it("reads each commit's revsync.yaml (one git for all); a commit git cannot show, or whose name is no commit's, is left out", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-promote-from-"));
    try {
      const commit = (text: string): string => {
        writeFileSync(join(dir, "revsync.yaml"), text);
        return commitAll(dir, "x");
      };
      const a = commit("environments:\n  production: { promote_from: sandbox }\n  sandbox: {}\n");
      const b = commit("environments:\n  production: {}\n");
      mkdirSync(join(dir, "sub", "revsync.yaml"), { recursive: true });
      writeFileSync(join(dir, "sub", "revsync.yaml", "x"), "y");
      const c = commit("not: [yaml\n");
      const missing = "0".repeat(40);
      const asked = [a, b, a, c, missing, `${b}\n${a}`, "--output=x", ""];
      const got = await promoteFromAtCommits(dir, "./revsync.yaml", asked, process.env);
      expect([...got.entries()]).toEqual([
        [a, { production: "sandbox" }],
        [b, {}],
        [c, {}],
      ]);
      // A path that names a folder at that commit reads as no promote_from, as git show's listing did.
      expect([...(await promoteFromAtCommits(join(dir, "sub"), "./revsync.yaml", [c], process.env)).entries()]).toEqual([[c, {}]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
