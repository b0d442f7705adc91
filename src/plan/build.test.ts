import { describe, expect, it } from "vitest";
import { unknownValues } from "../api/vocabulary.js";
import type { DesiredSsp, DesiredState } from "../config/repo.js";
import { PROFILES } from "../emulator/profile.js";
import { exportFiles, renderFile } from "../export/mapping.js";
import { fileValidator } from "../schema/ajv.js";
import { valuesToCsv } from "../ssp/csv.js";
import { applyInMemory, demoState, desiredFrom, liveOf } from "../testing/builders.js";
import { buildDrift, buildPlan } from "./build.js";
import type { Plan } from "./model.js";

const META = { environment: "demo", baseUrl: "http://127.0.0.1:1", authUrl: "http://127.0.0.1:1", realm: "demo", user: "alice", targets: [] };
const plan = (desired: DesiredState, live: ReturnType<typeof liveOf>, targets: string[] = []): Plan => buildPlan(desired, live, { ...META, targets });
const actions = (p: Plan): string[] => p.changes.map((c) => `${c.action} ${c.address}`);

describe("buildPlan and buildDrift against export (both answer profiles)", () => {
  it.each(PROFILES)("%s: the exported files plan to no change, and validate", (profile) => {
    const t = demoState().tenants[0];
    if (!t) throw new Error("no tenant");
    const live = liveOf(t, profile);
    const files = exportFiles(live, []);
    for (const f of files) {
      const validate = fileValidator(f.schema);
      expect({ file: f.file, valid: validate(f.value), errors: validate.errors ?? null }).toEqual({ file: f.file, valid: true, errors: null });
    }
    const p = plan(desiredFrom(files), live);
    expect(actions(p)).toEqual([]);
    // What export could not express: the batches in "file uploaded" status, as drift says.
    const drift = buildDrift(desiredFrom(files), live, { environment: "demo", targets: [] });
    expect(drift.drift.map((d) => `${d.class} ${d.address}`)).toEqual([
      "unmanaged_batch ssp/Hardware SSP/batch/FY26-H2",
      "unmanaged_batch ssp/Software Subscriptions SSP/batch/FY26-Q1",
    ]);
    const hw = files.find((f) => f.address === "ssp/Hardware SSP");
    expect(hw?.leftOut).toContain('ssp/Hardware SSP/batch/FY26-H2 (status "file uploaded")');
    expect(p.notes).toEqual([]);
    if (profile === "literal") {
      expect(hw?.leftOut).toContain("ssp/Hardware SSP: floor_percentage (the service shows null)");
      // git's value for a field the service shows as null is not compared: no change, said once.
      const desired = desiredFrom(files);
      desired.ssp.find((d) => d.name === "Hardware SSP")!.spec.floor_percentage = 85;
      const withFloor = plan(desired, live);
      expect(actions(withFloor)).toEqual([]);
      expect(withFloor.notes).toEqual([
        "the service shows no value (null) for these fields, so git's values for them were not compared: Hardware SSP (floor_percentage)",
      ]);
    }
  });
});

describe("the tolerant read (liberal in what revsync reads)", () => {
  /** The demo tenant with what a literal service may answer: unknown operator, method and distribution
   *  method, nulls, and fields nobody documented. */
  function odd() {
    const state = demoState();
    const t = state.tenants[0];
    if (!t) throw new Error("no tenant");
    const hw = t.ssp.find((p) => p.compliance_name === "Hardware SSP");
    const sw = t.ssp.find((p) => p.compliance_name === "Software Subscriptions SSP");
    const tc = t.tenantConfigurations[0]?.compliance_spec?.[0] as Record<string, unknown>;
    if (!hw || !sw || !tc) throw new Error("seed changed");
    hw.item.when = [{ field_name: "product_family", operator: "=", value: "Hardware" }];
    (hw.item as unknown as Record<string, unknown>).x_unknown_field = { nested: true };
    sw.item.method = "magic";
    sw.item.floor_percentage = null;
    tc.distribution_method = "Weekly";
    return { state, t };
  }

  it("each unknown value is found with its place; the answer is used as it is", () => {
    const { t } = odd();
    const live = liveOf(t);
    const found = [
      ...unknownValues(live.tenantConfigs),
      ...[...live.ssp.values()].flatMap((p) => unknownValues([{ ...p.envelope, compliance_spec: [p.item] }])),
    ];
    expect(found.map((u) => `${u.field}=${u.value}@${u.policy ?? ""}`)).toEqual([
      "distribution_method=Weekly@Default Tenant Configuration",
      "operator==@Hardware SSP",
      "method=magic@Software Subscriptions SSP",
    ]);
  });

  it("export leaves out what a policy file may not hold, with a comment in its place; the files validate and plan to no change", () => {
    const { t } = odd();
    const live = liveOf(t);
    const files = exportFiles(live, []);
    const byAddr = new Map(files.map((f) => [f.address, f]));
    const hw = byAddr.get("ssp/Hardware SSP");
    const sw = byAddr.get("ssp/Software Subscriptions SSP");
    const tc = byAddr.get("tenant-configuration/Default Tenant Configuration");
    expect(hw?.value.spec.when).toBeUndefined();
    expect(hw?.leftOut).toContain('ssp/Hardware SSP: when (operator "=")');
    expect(renderFile(hw!, ["header"])).toMatch(
      /\n {2}# when: left out, the service holds a value a policy file may not \(operator "="\); it keeps its live value\n/,
    );
    expect(sw?.value.spec.method).toBeUndefined();
    expect(sw?.value.spec.floor_percentage).toBeUndefined();
    expect(sw?.leftOut).toEqual(expect.arrayContaining(['ssp/Software Subscriptions SSP: method (method "magic")']));
    expect(tc?.value.spec.distribution_method).toBeUndefined();
    for (const f of files) expect(fileValidator(f.schema)(f.value)).toBe(true);
    expect(actions(plan(desiredFrom(files), live))).toEqual([]);
  });

  it("an operator written as a symbol equals its words (spec 2.3), in either direction", () => {
    const t = demoState().tenants[0]!;
    const live = liveOf(t);
    const desired = desiredFrom(exportFiles(live, []));
    const hw = desired.ssp.find((d) => d.name === "Hardware SSP")!;
    hw.spec.when = [{ field_name: "unit_list_price", operator: ">", value: "100" }];
    t.ssp.find((p) => p.compliance_name === "Hardware SSP")!.item.when = [{ field_name: "unit_list_price", operator: "greater than", value: "100" }];
    expect(actions(plan(desired, liveOf(t)))).toEqual([]);
  });
});

describe("what buildPlan decides", () => {
  const base = () => {
    const state = demoState();
    const t = state.tenants[0]!;
    const live = liveOf(t);
    return { state, t, live, desired: desiredFrom(exportFiles(live, [])) };
  };
  const newPolicy = (over: Partial<DesiredSsp["spec"]> = {}): DesiredSsp => ({
    name: "New SSP",
    spec: {
      method: "formula",
      active: true,
      hierarchy_no: 99,
      data_identifiers: ["product_id"],
      floor_percentage: 80,
      ceiling_percentage: 120,
      expression: "x",
      ...over,
    },
    batches: [],
    source: { file: "policies/new.yaml", line: 4, column: 9 },
    specSource: { file: "policies/new.yaml", line: 5, column: 3 },
  });

  it("a tenant change is one update carrying all 14 fields of the body, git's values over live ones", () => {
    const { desired, live } = base();
    desired.tenantConfigs[0]!.spec.carves_allocation = true;
    const p = plan(desired, live);
    expect(actions(p)).toEqual(["update tenant-configuration/Default Tenant Configuration"]);
    const c = p.changes[0]!;
    expect(c.diff).toEqual([{ path: "carves_allocation", kind: "changed", before: false, after: true }]);
    expect(c.payload?.kind === "update" && Object.keys(c.payload.item).sort()).toHaveLength(14);
    expect(c.version_id).toBe("1");
  });

  it("a new policy is a create, in hierarchy order after updates; one without the create fields is refused at its file and line", () => {
    const { desired, live } = base();
    desired.ssp.push(newPolicy(), { ...newPolicy({ hierarchy_no: 98 }), name: "Earlier SSP" });
    expect(actions(plan(desired, live))).toEqual(["create ssp/Earlier SSP", "create ssp/New SSP"]);
    const { floor_percentage: _f, ceiling_percentage: _c, ...rest } = newPolicy().spec;
    desired.ssp.push({ ...newPolicy(), name: "Incomplete SSP", spec: rest });
    expect(() => plan(desired, live)).toThrow(
      /policies\/new\.yaml:5:3: ssp\/Incomplete SSP does not exist in the service, and creating it needs floor_percentage, ceiling_percentage in spec/,
    );
  });

  it("batch lifecycle: forward is review then approve; backwards, missing or values that differ are unsupported with the reason", () => {
    const { desired, live } = base();
    const hw = desired.ssp.find((d) => d.name === "Hardware SSP")!;
    hw.batches = [
      { name: "FY25-H2", status: "reviewed" }, // approved live: backwards
      { name: "FY26-H1", status: "approved" }, // reviewed live: approve
      { name: "FY26-H2", status: "approved" }, // file uploaded live: review, approve
      { name: "FY27-H1", status: "approved" }, // not in the service
    ];
    const p = plan(desired, live);
    expect(actions(p)).toEqual([
      "review ssp/Hardware SSP/batch/FY26-H2",
      "approve ssp/Hardware SSP/batch/FY26-H1",
      "approve ssp/Hardware SSP/batch/FY26-H2",
      "unsupported ssp/Hardware SSP/batch/FY25-H2",
      "unsupported ssp/Hardware SSP/batch/FY27-H1",
    ]);
    expect(p.changes.find((c) => c.address.endsWith("FY25-H2"))?.reason).toBe("a batch cannot move back from approved to reviewed");
  });

  it("values that differ from git block the batch's review and approve, counting the rows", () => {
    const { desired, live, t } = base();
    const stored = t.ssp.find((p) => p.compliance_name === "Hardware SSP")!.batches.find((b) => b.batch_name === "FY26-H1")!;
    const rows = stored.ssp_values.map(({ ssp_value_id: _id, ...v }) => v);
    const changed = rows.map((v, i) => (i === 0 ? { ...v, mid_point: v.mid_point + 1 } : v)).slice(0, -1);
    desired.ssp.find((d) => d.name === "Hardware SSP")!.batches.find((b) => b.name === "FY26-H1")!.status = "approved";
    Object.assign(
      desired.ssp.find((d) => d.name === "Hardware SSP")!.batches.find((b) => b.name === "FY26-H1")!,
      {
        values: { text: valuesToCsv(changed), file: "fy26-h1.csv", rows: changed },
        valuesShown: "policies/fy26-h1.csv",
      },
    );
    const c = plan(desired, live).changes.filter((x) => x.address === "ssp/Hardware SSP/batch/FY26-H1");
    expect(c.map((x) => x.action)).toEqual(["unsupported"]);
    expect(c[0]?.reason).toMatch(/^blocked: the uploaded values differ from policies\/fy26-h1\.csv in 2 row\(s\)/);
  });

  it("an existing policy whose fields differ is unsupported: the interface has no update for it", () => {
    const { desired, live } = base();
    desired.ssp.find((d) => d.name === "Hardware SSP")!.spec.hierarchy_no = 11;
    const p = plan(desired, live);
    expect(actions(p)).toEqual(["unsupported ssp/Hardware SSP"]);
    expect(p.changes[0]?.diff).toEqual([{ path: "hierarchy_no", kind: "changed", before: 10, after: 11 }]);
  });

  it("targets select an address and what lies below it", () => {
    const { desired, live } = base();
    desired.tenantConfigs[0]!.spec.carves_allocation = true;
    desired.ssp.find((d) => d.name === "Hardware SSP")!.batches.push({ name: "FY26-H2", status: "approved" });
    expect(actions(plan(desired, live, ["ssp/Hardware SSP"]))).toEqual(["review ssp/Hardware SSP/batch/FY26-H2", "approve ssp/Hardware SSP/batch/FY26-H2"]);
    expect(actions(plan(desired, live, ["tenant-configuration/Default Tenant Configuration"]))).toHaveLength(1);
  });

  it("the payloads applied to the tenant in memory leave nothing to plan", () => {
    const { desired, live, state, t } = base();
    desired.tenantConfigs[0]!.spec.manual_journal_contra_account = "MJ-NEW";
    desired.ssp.push(newPolicy());
    desired.ssp.find((d) => d.name === "Hardware SSP")!.batches.push({ name: "FY26-H2", status: "approved" });
    const first = plan(desired, live);
    expect(first.changes).toHaveLength(4);
    expect(applyInMemory(state, t, first)).toEqual([]);
    expect(actions(plan(desired, liveOf(t)))).toEqual([]);
  });
});

describe("buildDrift", () => {
  it("classes, with git before the service", () => {
    const state = demoState();
    const t = state.tenants[0]!;
    const desired = desiredFrom(exportFiles(liveOf(t), []));
    desired.tenantConfigs[0]!.spec.ui_mode = "Modern";
    desired.ssp.push({ ...desired.ssp[0]!, name: "Only In Git" });
    t.ssp.find((p) => p.compliance_name === "Hardware SSP")!.batches.find((b) => b.batch_name === "FY26-H1")!.status = "approved";
    const d = buildDrift({ ...desired, ssp: desired.ssp.filter((s) => s.name !== "Professional Services SSP") }, liveOf(t), {
      environment: "demo",
      targets: [],
    });
    expect(d.drift.map((x) => `${x.class} ${x.address}`).sort()).toEqual([
      "batch_status ssp/Hardware SSP/batch/FY26-H1",
      "changed tenant-configuration/Default Tenant Configuration",
      "missing ssp/Only In Git",
      "unmanaged ssp/Professional Services SSP",
      "unmanaged_batch ssp/Hardware SSP/batch/FY26-H2",
      "unmanaged_batch ssp/Software Subscriptions SSP/batch/FY26-Q1",
    ]);
    expect(d.drift.find((x) => x.class === "changed")?.diff).toEqual([{ path: "ui_mode", kind: "changed", before: "Modern", after: "Classic" }]);
    expect(d.summary).toMatchObject({ changed: 1, unmanaged: 1, unmanaged_batch: 2, missing: 1, batch_status: 1, batch_values: 0 });
  });
});
