import { describe, expect, it } from "vitest";
import type { SspItem } from "../../schema/generated/api.js";
import type { FourEyesFacts } from "../../shared/entries.js";
import { approvedBy, approverUnconfirmed } from "./four-eyes.js";

// Who approved a batch is what the service shows right after the approve (its updated_by once approved):
// the end to end cases are in test/four-eyes-who.e2e.test.ts; these are the ones the emulator cannot
// give (a service whose answer names nobody, or that cannot be read again).
const facts = (): FourEyesFacts => ({ reviewed_by: "alice", uploaded_by: "carol", policy_created_by: "alice", approved_by: "bob" });
const approved = (by: string | undefined): SspItem => ({ status: "approved", ...(by === undefined ? {} : { updated_by: by }) }) as SspItem;
const rule = { fourEyes: true, approverConfigured: true };

describe("who approved, as the service shows it", () => {
  it("the service names the user the approve was sent as: confirmed, no breach", () => {
    const f = facts();
    expect(approvedBy(f, approved("BOB"), rule)).toBeUndefined();
    expect(f).toMatchObject({ approved_by: "BOB", sent_as: "bob", confirmed: true });
    expect(f.rule).toBeUndefined();
  });

  it("the service names another user, or the batch's uploader: a breach, with who it was sent as", () => {
    const other = facts();
    expect(approvedBy(other, approved("dave"), { fourEyes: false, approverConfigured: true })).toContain(
      "the service shows it approved by dave, not by bob, the user it was sent as",
    );
    expect(other).toMatchObject({ approved_by: "dave", sent_as: "bob", rule: "breached" });
    const uploader = { ...facts(), approved_by: "carol" };
    expect(approvedBy(uploader, approved("carol"), rule)).toContain("carol uploaded this batch and the service shows it approved by carol");
    // Without four eyes, the uploader approving is the service's rule to keep, not a breach of revsync's.
    expect(approvedBy({ ...facts(), approved_by: "carol" }, approved("carol"), { fourEyes: false, approverConfigured: false })).toBeUndefined();
  });

  it("the service names nobody, or could not be read again: not confirmed, said where an approver matters, never a breach", () => {
    for (const read of [approved(""), approved(undefined), undefined]) {
      const f = facts();
      expect(approvedBy(f, read, rule)).toBeUndefined();
      expect(f).toMatchObject({ approved_by: "bob", sent_as: "bob", confirmed: false });
      expect(approverUnconfirmed(f, true)).toBe(
        "; who approved it is not confirmed: the service's answer, read right after the approve, names nobody (it was sent as bob)",
      );
      expect(approverUnconfirmed(f, false)).toBeUndefined();
    }
  });
});
