import { describe, expect, it } from "vitest";
import { fileValidator } from "../schema/ajv.js";
import { DEFAULT_SERVICE_CHOICES, serviceChoices, statusFromService } from "./service-choices.js";

describe("the tenant's choices where the interface is silent", () => {
  it("defaults, then approvals: of revsync.yaml, then the environment's service:, then the variables", () => {
    expect(serviceChoices(undefined, undefined, {})).toEqual(DEFAULT_SERVICE_CHOICES);
    expect(serviceChoices(undefined, { reject_action: "Declined" }, {}).rejectAction).toBe("Declined");
    const s = serviceChoices({ reject_action: "Refused", approve_action: "Approve", template_batch_name: "path" }, { reject_action: "Declined" }, {});
    expect(s).toMatchObject({ rejectAction: "Refused", approveAction: "Approve", templateBatchName: "path" });
    expect(serviceChoices({ reject_action: "Refused" }, undefined, { REVSYNC_REJECT_ACTION: "Nope", REVSYNC_APPROVE_ACTION: "Yes" })).toMatchObject({
      rejectAction: "Nope",
      approveAction: "Yes",
    });
  });

  it("a batch status text is read in revsync's words; a text no choice names passes through", () => {
    const s = serviceChoices({ batch_status: { approved: "Approved", reviewed: "In Review" } }, undefined, {});
    expect(statusFromService(s, "Approved")).toBe("approved");
    expect(statusFromService(s, "In Review")).toBe("reviewed");
    expect(statusFromService(s, "file uploaded")).toBe("file uploaded");
    expect(statusFromService(s, "approved")).toBe("approved");
    expect(statusFromService(s, "Archived")).toBe("Archived");
  });

  it("allocation_rules: the tenant's rule texts, none by default (texts are then read by their words)", () => {
    expect(DEFAULT_SERVICE_CHOICES.allocationRules).toEqual({});
    expect(serviceChoices({ allocation_rules: { "Standalone rate": "mid_point" } }, undefined, {}).allocationRules).toEqual({ "Standalone rate": "mid_point" });
  });

  it("revsync.yaml's schema takes only the four readings", () => {
    const valid = fileValidator("revsync-config.schema.json");
    const config = (rules: unknown) => ({ version: 1, environments: { demo: { base_url: "http://x", service: { allocation_rules: rules } } } });
    expect(valid(config({ "Standalone rate": "mid_point", "Hold at list": "transaction_price" }))).toBe(true);
    expect(valid(config({ "Standalone rate": "ssp" }))).toBe(false);
  });
});
