import { describe, expect, it } from "vitest";
import type { Change, Plan } from "../plan/model.js";
import { planMarkdown } from "./plan.js";

function plan(changes: Change[]): Plan {
  return {
    format_version: "1",
    environment: "production",
    created_at: "2026-11-21T00:00:00.000Z",
    base_url: "https://api.example.com",
    auth_url: "https://auth.example.com",
    realm: "acme",
    user: null,
    targets: [],
    changes,
    summary: { create: changes.length, update: 0, review: 0, approve: 0, unsupported: 0 },
    notes: [],
    checksum: "sha256:0",
  };
}

const create = (i: number): Change => ({
  address: `ssp/Policy ${i}`,
  action: "create",
  before: null,
  after: {},
  diff: Array.from({ length: 12 }, (_, k) => ({ path: `field_${k}`, kind: "added" as const, after: `value ${k} of a long policy field ${i}` })),
  version_id: null,
  last_modified_on: null,
});

describe("markdown plan", () => {
  it("starts with the hidden marker and names the environment", () => {
    const md = planMarkdown(plan([create(1)]));
    expect(md.split("\n")[0]).toBe("<!-- revsync-plan:production -->");
    expect(md).toContain("### revsync plan for `production`");
    expect(md).toContain("| + create | 1 |");
  });

  it("never passes 60,000 characters: past that, a pointer to the JSON plan", () => {
    const md = planMarkdown(plan(Array.from({ length: 2000 }, (_, i) => create(i))));
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toMatch(/_\d+ more change\(s\) not shown: the comment would pass 60,000 characters\. See the JSON plan artifact for the whole plan\._/);
    expect(md.trimEnd().endsWith("Plan: 2000 to create, 0 to update, 0 to review, 0 to approve.")).toBe(true);
  });

  it("a plan without changes says so", () => {
    expect(planMarkdown(plan([]))).toContain("**No changes.**");
  });
});
