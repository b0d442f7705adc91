import { describe, expect, it } from "vitest";
import type { Registry } from "../kinds/kind.js";
import type { Change } from "../shared/entries.js";
import type { SourceFinding } from "../shared/promotion.js";
import { blockedForPromotion, findingWords, promoteChanges, promotionFacts } from "./check.js";

const holds = (o: Partial<SourceFinding> = {}): SourceFinding => ({ compared: {}, notYet: [], differs: [], notShown: [], ...o });
/** A kind whose source holds what `findings` say, by address; and one that cannot compare at all. */
const findings = new Map<string, SourceFinding>();
const kinds = [{ name: "toy", promotion: (c: Change) => findings.get(c.address) ?? holds() }, { name: "other" }] as unknown as Registry;
const change = (action: Change["action"], address: string): Change => ({
  address,
  action,
  before: null,
  after: null,
  diff: [],
  version_id: null,
  last_modified_on: null,
  ...(action === "not_in_git" ? {} : { payload: { kind: "x" } }),
});
const source = { name: "sandbox", desired: new Map(), live: new Map(), here: new Map() };

describe("judging a plan's writes against their source", () => {
  it("promotes what the source holds; blocks what it does not, what follows a blocked create, and a kind that cannot compare; leaves the rest as it is", () => {
    findings.set("toy/P", holds({ notYet: ['no policy "P"'] }));
    findings.set("toy/Q", holds({ compared: { a: 1 }, differs: [{ field: "a", source: 1, git: 2 }] }));
    const out = promoteChanges(
      [
        change("create", "toy/P"),
        change("review", "toy/P/batch/B"),
        change("update", "toy/Q"),
        change("update", "toy/R"),
        change("update", "other/x"),
        change("not_in_git", "toy/Z"),
      ],
      source,
      kinds,
    );
    expect(out.map((c) => [c.address, c.action, c.promotion?.status, c.promotion?.action])).toEqual([
      ["toy/P", "blocked", "blocked", "create"],
      ["toy/P/batch/B", "blocked", "blocked", "review"],
      ["toy/Q", "blocked", "blocked", "update"],
      ["toy/R", "update", "promoted", "update"],
      ["other/x", "blocked", "blocked", "update"],
      ["toy/Z", "not_in_git", undefined, undefined],
    ]);
    expect(out[0]?.payload).toBeUndefined();
    expect(out[1]?.reason).toBe("the create of toy/P is blocked for promotion, so nothing is done for its batches");
    expect(out[2]?.reason).toMatch(/^differs in sandbox: a \(sandbox holds 1, git 2\); someone changed sandbox since/);
    expect(out[4]?.reason).toBe("revsync cannot compare other between environments, so it promotes none of it");
    expect(blockedForPromotion({ changes: out })).toHaveLength(4);
    const facts = promotionFacts(out, { name: "sandbox", baseUrl: "u", realm: "r", user: "bob", commit: null, uncommitted: [] }, "2026-01-01T00:00:00Z");
    expect(facts).toMatchObject({ from: "sandbox", promoted: 1, blocked: 4, read_at: "2026-01-01T00:00:00Z" });
  });

  it("promotes nothing while the policy tests fail in the source, keeping what was compared; says why in words of each kind of finding", () => {
    findings.clear();
    const out = promoteChanges([change("update", "toy/R")], { ...source, tests: { cases: 1, contracts: 0, failed: ['case "x" (t.yaml:3): no'] } }, kinds);
    expect(out[0]).toMatchObject({ action: "blocked", promotion: { status: "blocked" } });
    expect(out[0]?.reason).toBe('the policy tests fail live in sandbox (as revsync test --live --env sandbox runs them): case "x" (t.yaml:3): no');
    expect(findingWords("sandbox", holds())).toBeUndefined();
    expect(findingWords("sandbox", holds({ leftOut: true }))).toMatch(/^not in sandbox: git's files leave it out of sandbox \(metadata\.environments\)/);
    expect(findingWords("sandbox", holds({ notYet: ["a is still 1"] }))).toBe(
      "not yet in sandbox: a is still 1; apply it to sandbox first (revsync apply --env sandbox), then plan again",
    );
  });
});
