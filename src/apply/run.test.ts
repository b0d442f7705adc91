import { describe, expect, it } from "vitest";
import type { Change } from "../plan/model.js";
import { ApiError } from "../errors.js";
import { outcomeWords } from "./run.js";
import { seenFields, updateBody, updatePayload } from "../kinds/envelope-list/write.js";
import { versionMoved } from "../kinds/words.js";

const item = {
  ar_accounting: true,
  can_delete: false,
  carves_allocation: true,
  create_revenue_schedules: true,
  distribution_method: "Days in Calendar Period",
  guid: "g-1",
  is_user_defined: true,
  journals_run_currency: "USD",
  lt_st_accounting: true,
  manual_journal: true,
  manual_journal_contra_account: "MJ-CONTRA-100",
  multi_currency_revenue_contracts: false,
  prorate_method: "Daily",
  ui_mode: "Classic",
};

const update: Change = {
  address: "tenant-configuration/T",
  action: "update",
  before: { carves_allocation: false },
  after: { carves_allocation: true },
  diff: [{ path: "carves_allocation", kind: "changed", before: false, after: true }],
  version_id: "3",
  last_modified_on: 1_767_225_600,
  payload: { kind: "update", compliance_id: "TC-1", compliance_name: "T", unique_key: "uk", item },
};

describe("what apply checks right before a write", () => {
  it("the 14 fields as the plan read them: git's fields at their live values, the rest as sent", () => {
    expect(seenFields(update)).toEqual({ ...item, carves_allocation: false });
  });

  it("version_id where both sides have one, last_modified_on likewise: a service without version_id is judged by last_modified_on", () => {
    const rec = { version_id: "3", last_modified_on: 100 };
    expect(versionMoved(rec, { version_id: "3", last_modified_on: 100 })).toEqual([]);
    expect(versionMoved(rec, { version_id: "4", last_modified_on: 160 })).toEqual([
      "version_id 3 -> 4",
      "last_modified_on 1970-01-01T00:01:40Z -> 1970-01-01T00:02:40Z",
    ]);
    // No version_id in the answer: never stale for that alone, stale when last_modified_on moved.
    expect(versionMoved(rec, { last_modified_on: 100 })).toEqual([]);
    expect(versionMoved({ version_id: null, last_modified_on: 100 }, { last_modified_on: 101 })).toEqual([
      "last_modified_on 1970-01-01T00:01:40Z -> 1970-01-01T00:01:41Z",
    ]);
    expect(versionMoved({ version_id: null, last_modified_on: null }, { version_id: "9", last_modified_on: 5 })).toEqual([]);
  });

  it("the update body names the signed-in user and takes current_timestamp from the run's clock", () => {
    const clock = { now: () => 1_767_225_600_999, sleep: async () => undefined };
    const p = updatePayload(update);
    if (!p) throw new Error("not an update");
    expect(updateBody(p, "bob", clock)).toEqual({
      user_name: "bob",
      current_timestamp: "1767225600",
      format_type: "JSON",
      compliance_name: "T",
      unique_key: "uk",
      compliance_spec: [item],
    });
  });
});

describe("a write's outcome in the report's words (from what the write unit learned, never from a message)", () => {
  it.each([
    ["update", { kind: "done", result: {} }, "updated"],
    ["update", { kind: "confirmed", why: "the answer was lost", result: {} }, "updated (the answer was lost; confirmed by reading it back)"],
    ["update", { kind: "already", why: "the service holds git's values" }, "already applied (the service holds git's values; nothing was sent)"],
    ["create", { kind: "done", result: {} }, "created"],
    ["create", { kind: "confirmed", why: "the service answered 502", result: {} }, "created (the service answered 502; confirmed by reading it back)"],
    ["review", { kind: "done", result: {} }, "reviewed"],
    ["review", { kind: "already", status: "approved", why: "the service shows it" }, "already approved (the service shows it; nothing was sent)"],
    [
      "approve",
      { kind: "confirmed", status: "approved", why: "the answer was lost", result: {} },
      "approved (the answer was lost; confirmed by reading it back)",
    ],
  ] as const)("%s, %j: %s", (action, outcome, words) => {
    expect(outcomeWords(action, outcome)).toBe(words);
  });

  it("blocked, refused and unknown fail the step with their words", () => {
    expect(() => outcomeWords("update", { kind: "blocked", reason: "blocked: x changed; nothing was sent for it" })).toThrow(/^blocked: x changed/);
    const refused = new ApiError({ method: "POST", path: "/p", status: 409, message: "exists in the service now" });
    expect(() => outcomeWords("create", { kind: "refused", error: refused })).toThrow(refused);
    const lost = new ApiError({ method: "POST", path: "/p", status: 0, message: "no answer", outcomeUnknown: true });
    expect(() => outcomeWords("create", { kind: "unknown", error: lost })).toThrow(/^outcome unknown: POST \/p failed/);
  });
});
