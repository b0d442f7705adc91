import { describe, expect, it } from "vitest";
import { exportFiles } from "../export/mapping.js";
import { buildPlan } from "../plan/build.js";
import type { Change, Plan } from "../plan/model.js";
import { demoState, desiredFrom, liveOf } from "../testing/builders.js";
import { payloadProblems } from "./run.js";
import type { CreatePayload } from "../kinds/ssp/payload.js";

const META = { environment: "demo", baseUrl: "http://127.0.0.1:1", authUrl: "http://127.0.0.1:1", realm: "demo", user: "alice", targets: [] };

/** The demo tenant with git holding one more upload policy: a copy of one the service has, with its
 *  batches and their values, so that its create uploads them. */
function planWithUploadCreate(): Plan {
  const live = liveOf(demoState().tenants[0]!);
  const desired = desiredFrom(exportFiles(live, []));
  const source = desired.ssp.find((d) => d.spec.method === "upload" && d.batches.some((b) => b.values));
  if (!source) throw new Error("the demo tenant has no upload policy with values");
  desired.ssp.push({ ...source, name: "Copy SSP", spec: { ...source.spec, hierarchy_no: 999, floor_percentage: 85, ceiling_percentage: 115 } });
  return buildPlan(desired, live, META);
}

const createOf = (plan: Plan): Change & { payload: CreatePayload } => {
  const c = plan.changes.find((x) => x.action === "create" && x.address === "ssp/Copy SSP");
  if (c?.payload?.kind !== "create") throw new Error("no create of ssp/Copy SSP");
  return c as Change & { payload: CreatePayload };
};

describe("a saved plan's create sends what its entry shows", () => {
  it("as revsync wrote it: no problem, and the entry lists the batches the create uploads", () => {
    const plan = planWithUploadCreate();
    const c = createOf(plan);
    expect((c.after as { batches?: unknown[] }).batches?.length).toBeGreaterThan(0);
    expect(payloadProblems(plan)).toEqual([]);
  });

  it("a policy field, a batch's file, an extra batch or a value edited in the payload is refused", () => {
    const field = planWithUploadCreate();
    (createOf(field).payload.body.compliance_spec[0] as { hierarchy_no: number }).hierarchy_no = 1;
    expect(payloadProblems(field).join("\n")).toMatch(/ssp\/Copy SSP \(create\): the payload's policy is not the reviewed one/);

    const file = planWithUploadCreate();
    const batches = (createOf(file).payload.body.compliance_spec[0] as { batches: { file_name: string }[] }).batches;
    batches[0]!.file_name = "other.csv";
    expect(payloadProblems(file).join("\n")).toMatch(/the payload's batches are not the ones the plan shows/);

    const extra = planWithUploadCreate();
    const spec = createOf(extra).payload.body.compliance_spec[0] as { batches: { batch_name: string }[] };
    spec.batches.push({ ...spec.batches[0]!, batch_name: "Unreviewed" });
    expect(payloadProblems(extra).join("\n")).toMatch(/the payload's batches are not the ones the plan shows/);

    const value = planWithUploadCreate();
    const rows = (createOf(value).payload.body.compliance_spec[0] as { batches: { batch_name: string; ssp_values: { mid_point: number }[] }[] }).batches[0]!;
    rows.ssp_values[0]!.mid_point += 1;
    expect(payloadProblems(value).join("\n")).toMatch(/the payload's batches are not the ones the plan shows/);
  });
});
