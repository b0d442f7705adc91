import { describe, expect, it } from "vitest";
import { unknownValues } from "../api/vocabulary.js";
import type { DesiredBatch, DesiredSsp } from "../kinds/ssp/files.js";
import { PROFILES } from "../emulator/profile.js";
import { exportFiles, renderFile } from "../export/mapping.js";
import { fileValidator } from "../schema/ajv.js";
import { checkValuesText } from "../config/values.js";
import { valuesToCsv } from "../ssp/csv.js";
import { applyInMemory, demoState, DesiredView, desiredFrom, liveOf } from "../testing/builders.js";
import { buildPlan } from "./build.js";
import { buildDrift } from "./drift.js";
import type { Plan } from "./model.js";
import { markdownText } from "../report/escape.js";
import { driftMarkdown, planMarkdown } from "../report/plan.js";

const META = { environment: "demo", baseUrl: "http://127.0.0.1:1", authUrl: "http://127.0.0.1:1", realm: "demo", user: "alice", targets: [] };
const plan = (desired: DesiredView, live: ReturnType<typeof liveOf>, targets: string[] = []): Plan => buildPlan(desired, live, { ...META, targets });
const actions = (p: Plan): string[] => p.changes.map((c) => `${c.action} ${c.address}`);

/** The demo tenant, what plan reads of it, and git as export writes it. */
const base = () => {
  const state = demoState();
  const t = state.tenants[0]!;
  const live = liveOf(t);
  return { state, t, live, desired: desiredFrom(exportFiles(live, [])) };
};

/** A new formula policy in git, with spec overrides. */
const newPolicy = (over: Partial<DesiredSsp["spec"]> = {}, name = "New SSP"): DesiredSsp => ({
  name,
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

describe("buildPlan and buildDrift against export (both answer profiles)", () => {
  it.each(PROFILES)("%s: the exported files, values included, validate and plan to no change; drift finds nothing on day one", (profile) => {
    const t = demoState().tenants[0];
    if (!t) throw new Error("no tenant");
    const live = liveOf(t, profile);
    const files = exportFiles(live, []);
    for (const f of files) {
      const validate = fileValidator(f.schema);
      expect({ file: f.file, valid: validate(f.value), errors: validate.errors ?? null }).toEqual({ file: f.file, valid: true, errors: null });
      for (const v of f.valuesFiles) expect({ file: v.file, problems: checkValuesText(v.text, v.file).diagnostics }).toEqual({ file: v.file, problems: [] });
    }
    // Every batch is listed with its live status, file uploaded included, its values beside the file, and
    // its dates.
    const hw = files.find((f) => f.address === "ssp/Hardware SSP");
    const dates = (start: string, end: string) => ({ effective_start_date: start, effective_end_date: end });
    expect(hw?.value.batches).toEqual([
      { name: "FY25-H2", status: "approved", values: "values/hardware-ssp-fy25-h2.csv", ...dates("2025-07-01", "2025-12-31") },
      { name: "FY26-H1", status: "reviewed", values: "values/hardware-ssp-fy26-h1.csv", ...dates("2026-01-01", "2026-06-30") },
      { name: "FY26-H2", status: "file uploaded", values: "values/hardware-ssp-fy26-h2.csv", ...dates("2026-07-01", "2026-12-31") },
    ]);
    expect(hw?.valuesFiles.map((v) => v.file)).toEqual([
      "ssp/values/hardware-ssp-fy25-h2.csv",
      "ssp/values/hardware-ssp-fy26-h1.csv",
      "ssp/values/hardware-ssp-fy26-h2.csv",
    ]);
    // A calculator batch has no file: its values are written from the batch read.
    expect(files.find((f) => f.address === "ssp/Support Renewals SSP")?.value.batches).toEqual([
      { name: "FY26-CALC", status: "reviewed", ...dates("2026-01-01", "2026-12-31"), values: "values/support-renewals-ssp-fy26-calc.csv" },
    ]);
    const p = plan(desiredFrom(files), live);
    expect(actions(p)).toEqual([]);
    expect(buildDrift(desiredFrom(files), live, { environment: "demo", targets: [] }).drift).toEqual([]);
    expect(p.notes).toEqual([]);
    if (profile === "literal") {
      expect(hw?.leftOut).toContain("ssp/Hardware SSP: floor_percentage (the service shows null)");
      // git's value for a field the service shows as null is not compared: no change, said once.
      const desired = desiredFrom(files);
      desired.ssp.find((d) => d.name === "Hardware SSP")!.spec.floor_percentage = 85;
      const withFloor = plan(desired, live);
      expect(actions(withFloor)).toEqual([]);
      const note =
        "ssp/Hardware SSP: floor_percentage not compared: the service shows no value (null) for it, so git's value could be neither checked nor changed";
      expect(withFloor.notes).toEqual([note]);
      // Drift and the markdown of both say it the same way, and never "matches" without it.
      const drift = buildDrift(desired, live, { environment: "demo", targets: [] });
      expect(drift.drift).toEqual([]);
      expect(drift.notes).toEqual([note]);
      const md = planMarkdown(withFloor);
      expect(md).toContain(`> Note: ${markdownText(note)}`);
      expect(md).not.toContain("The service matches the policy repo.");
      expect(driftMarkdown(drift)).toContain(`> Note: ${markdownText(note)}`);
      expect(driftMarkdown(drift)).not.toContain("**No drift.**");
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
  it("a tenant change is one update carrying all 14 fields of the body, git's values over live ones", () => {
    const { desired, live } = base();
    desired.tenantConfigs[0]!.spec.carves_allocation = true;
    const p = plan(desired, live);
    expect(actions(p)).toEqual(["update tenant-configuration/Default Tenant Configuration"]);
    const c = p.changes[0]!;
    expect(c.diff).toEqual([{ path: "carves_allocation", kind: "changed", before: false, after: true }]);
    expect(c.payload?.kind === "update" && Object.keys(c.payload.item as object).sort()).toHaveLength(14);
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

  /** git's batch of a policy (export gave it the service's values). */
  const batchOf = (desired: DesiredView, policy: string, batch: string): DesiredBatch => {
    const b = desired.ssp.find((d) => d.name === policy)?.batches.find((x) => x.name === batch);
    if (!b) throw new Error(`no batch ${policy}/${batch}`);
    return b;
  };

  it("batch lifecycle: forward is review then approve, bound to the batch's file and values; backwards or missing are unsupported with the reason", () => {
    const { desired, live } = base();
    const hw = desired.ssp.find((d) => d.name === "Hardware SSP")!;
    const values = (name: string) => batchOf(desired, "Hardware SSP", name);
    hw.batches = [
      { ...values("FY25-H2"), status: "reviewed" }, // approved live: backwards
      { ...values("FY26-H1"), status: "approved" }, // reviewed live: approve
      { ...values("FY26-H2"), status: "approved" }, // file uploaded live: review, approve
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
    const approve = p.changes.find((c) => c.action === "approve" && c.address.endsWith("FY26-H1"))!;
    // What the reviewer approves, and what a saved plan binds the step to.
    expect(approve.values).toEqual({
      file: "ssp/values/hardware-ssp-fy26-h1.csv",
      rows: 12,
      products: 6,
      currencies: ["EUR", "USD"],
      from: "2026-01-01",
      to: "2026-06-30",
    });
    expect(approve.payload).toMatchObject({ kind: "batch", file_id: "FILE-SSP-HW-2", values_checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
  });

  it("git's status file uploaded: nothing to do while the service agrees; a batch already further is unsupported (backwards)", () => {
    const { desired, live } = base();
    expect(batchOf(desired, "Hardware SSP", "FY26-H2").status).toBe("file uploaded");
    expect(actions(plan(desired, live))).toEqual([]);
    batchOf(desired, "Hardware SSP", "FY26-H1").status = "file uploaded";
    expect(actions(plan(desired, live))).toEqual(["unsupported ssp/Hardware SSP/batch/FY26-H1"]);
  });

  it("a batch git holds no values for is blocked, saying where to get them; with the values it is approved", () => {
    const { desired, live } = base();
    const q1 = batchOf(desired, "Software Subscriptions SSP", "FY26-Q1");
    const held = { values: q1.values, valuesPath: q1.valuesPath, valuesShown: q1.valuesShown };
    Object.assign(q1, { status: "approved", values: undefined, valuesPath: undefined, valuesShown: undefined });
    const blocked = plan(desired, live);
    expect(actions(blocked)).toEqual(["blocked ssp/Software Subscriptions SSP/batch/FY26-Q1"]);
    expect(blocked.changes[0]?.reason).toBe(
      "git holds no values for this batch, so revsync will not move it to approved (values nobody reviewed are never reviewed or approved): revsync ssp download FILE-SSP-SW-1 --output ssp/values/software-subscriptions-ssp-fy26-q1.csv gets them; review them, then add `values: values/software-subscriptions-ssp-fy26-q1.csv` to this batch in ssp/software-subscriptions-ssp.yaml",
    );
    expect(blocked.summary).toMatchObject({ blocked: 1, review: 0, approve: 0 });
    Object.assign(q1, held);
    expect(actions(plan(desired, live))).toEqual([
      "review ssp/Software Subscriptions SSP/batch/FY26-Q1",
      "approve ssp/Software Subscriptions SSP/batch/FY26-Q1",
    ]);
  });

  it("values that differ from git block the batch, shown field by field, service -> git, capped with a count of the rest", () => {
    const { desired, live, t } = base();
    const stored = t.ssp.find((p) => p.compliance_name === "Hardware SSP")!.batches.find((b) => b.batch_name === "FY26-H1")!;
    const rows = stored.ssp_values.map(({ ssp_value_id: _id, ...v }) => v);
    const changed = rows.map((v, i) => (i === 0 ? { ...v, mid_point: v.mid_point + 5, above_mid_point: v.above_mid_point + 5 } : v)).slice(0, -1);
    Object.assign(batchOf(desired, "Hardware SSP", "FY26-H1"), {
      status: "approved",
      values: { text: valuesToCsv(changed), file: "fy26-h1.csv", rows: changed },
      valuesShown: "policies/fy26-h1.csv",
    });
    const c = plan(desired, live).changes.filter((x) => x.address === "ssp/Hardware SSP/batch/FY26-H1");
    expect(c.map((x) => x.action)).toEqual(["blocked"]);
    expect(c[0]?.reason).toMatch(/^the service's values differ from policies\/fy26-h1\.csv in 2 rows, so revsync will not move this batch to approved/);
    const first = rows[0]!;
    const key = `${first.product_id}|${first.currency_code}|${first.effective_start_date}`;
    expect(c[0]?.diff).toEqual(
      expect.arrayContaining([
        { path: `values[${key}].mid_point`, kind: "changed", before: first.mid_point, after: first.mid_point + 5 },
        { path: `values[${key}].above_mid_point`, kind: "changed", before: first.above_mid_point, after: first.above_mid_point + 5 },
      ]),
    );
    expect(c[0]?.diff_rows).toEqual({ shown: 2, total: 2 });

    // Many differing rows: the first 20 are shown, all are counted.
    const shifted = rows.map((v) => ({ ...v, effective_start_date: "2026-02-01" }));
    Object.assign(batchOf(desired, "Hardware SSP", "FY26-H1"), { values: { text: valuesToCsv(shifted), file: "fy26-h1.csv", rows: shifted } });
    const many = plan(desired, live).changes.find((x) => x.address === "ssp/Hardware SSP/batch/FY26-H1")!;
    expect(many.diff_rows).toEqual({ shown: 20, total: 24 });
    expect(many.diff).toHaveLength(20);
  });

  it("an existing policy whose fields differ is unsupported: the interface has no update for it", () => {
    const { desired, live } = base();
    desired.ssp.find((d) => d.name === "Hardware SSP")!.spec.hierarchy_no = 11;
    const p = plan(desired, live);
    expect(actions(p)).toEqual(["unsupported ssp/Hardware SSP"]);
    expect(p.changes[0]?.diff).toEqual([{ path: "hierarchy_no", kind: "changed", before: 10, after: 11 }]);
    // Who changed the live policy last, and when, as its envelope says.
    expect(p.changes[0]).toMatchObject({ modified_by: "alice", modified_on: "2026-01-01T00:00:00.000Z" });
  });

  it("targets select an address and what lies below it", () => {
    const { desired, live } = base();
    desired.tenantConfigs[0]!.spec.carves_allocation = true;
    batchOf(desired, "Hardware SSP", "FY26-H2").status = "approved";
    expect(actions(plan(desired, live, ["ssp/Hardware SSP"]))).toEqual(["review ssp/Hardware SSP/batch/FY26-H2", "approve ssp/Hardware SSP/batch/FY26-H2"]);
    expect(actions(plan(desired, live, ["tenant-configuration/Default Tenant Configuration"]))).toHaveLength(1);
  });

  it("the payloads applied to the tenant in memory leave nothing to plan", () => {
    const { desired, live, state, t } = base();
    desired.tenantConfigs[0]!.spec.manual_journal_contra_account = "MJ-NEW";
    desired.ssp.push(newPolicy());
    batchOf(desired, "Hardware SSP", "FY26-H2").status = "approved";
    const first = plan(desired, live);
    expect(first.changes).toHaveLength(4);
    expect(applyInMemory(state, t, first)).toEqual([]);
    expect(actions(plan(desired, liveOf(t)))).toEqual([]);
  });
});

describe("buildDrift", () => {
  it("classes, with git before the service; each entry names who changed the thing itself last, and when", () => {
    const state = demoState();
    const t = state.tenants[0]!;
    const desired = desiredFrom(exportFiles(liveOf(t), []));
    desired.tenantConfigs[0]!.spec.ui_mode = "Modern";
    desired.ssp.push({ ...desired.ssp[0]!, name: "Only In Git" });
    const hwGit = desired.ssp.find((d) => d.name === "Hardware SSP")!;
    hwGit.spec.ceiling_percentage = 120;
    hwGit.batches = hwGit.batches.filter((b) => b.name !== "FY26-H2");
    const sw = desired.ssp.find((d) => d.name === "Software Subscriptions SSP")!;
    sw.batches = sw.batches.filter((b) => b.name !== "FY26-Q1");
    const hw = t.ssp.find((p) => p.compliance_name === "Hardware SSP")!;
    // carol approved FY26-H1 outside git; the policy itself was last changed by alice.
    Object.assign(
      hw.batches.find((b) => b.batch_name === "FY26-H1")!,
      { status: "approved", updated_by: "carol", updated_at: 1_780_000_000 },
    );
    const git = new DesiredView({ tenantConfigs: desired.tenantConfigs, ssp: desired.ssp.filter((s) => s.name !== "Professional Services SSP") });
    const d = buildDrift(git, liveOf(t), { environment: "demo", targets: [] });
    expect(d.drift.map((x) => `${x.class} ${x.address}`).sort()).toEqual([
      "batch_status ssp/Hardware SSP/batch/FY26-H1",
      "changed ssp/Hardware SSP",
      "changed tenant-configuration/Default Tenant Configuration",
      "missing ssp/Only In Git",
      "unmanaged ssp/Professional Services SSP",
      "unmanaged_batch ssp/Hardware SSP/batch/FY26-H2",
      "unmanaged_batch ssp/Software Subscriptions SSP/batch/FY26-Q1",
    ]);
    expect(d.drift.find((x) => x.address === "tenant-configuration/Default Tenant Configuration")?.diff).toEqual([
      { path: "ui_mode", kind: "changed", before: "Modern", after: "Classic" },
    ]);
    expect(d.summary).toMatchObject({ changed: 2, unmanaged: 1, unmanaged_batch: 2, missing: 1, batch_status: 1, batch_values: 0 });
    const who = (addr: string) => {
      const item = d.drift.find((x) => x.address === addr);
      return [item?.modified_by, item?.modified_on];
    };
    expect(who("ssp/Hardware SSP/batch/FY26-H1")).toEqual(["carol", new Date(1_780_000_000_000).toISOString()]);
    expect(who("ssp/Hardware SSP")).toEqual(["alice", "2026-01-01T00:00:00.000Z"]);
    expect(who("ssp/Only In Git")).toEqual([null, null]);

    // Plan and drift classify the same things the same way: what drift calls unmanaged, plan shows as not in git.
    const p = plan(git, liveOf(t));
    const unmanaged = d.drift.filter((x) => x.class.startsWith("unmanaged")).map((x) => x.address);
    expect(
      p.changes
        .filter((c) => c.action === "not_in_git")
        .map((c) => c.address)
        .sort(),
    ).toEqual(unmanaged.sort());
  });
});

describe("the plan is the whole truth", () => {
  it("a policy removed from git is a not-in-git entry with what to do, counted in the summary; apply makes no step of it", () => {
    const { desired, live } = base();
    desired.ssp = desired.ssp.filter((d) => d.name !== "Professional Services SSP");
    const p = plan(desired, live);
    expect(actions(p)).toEqual(["not_in_git ssp/Professional Services SSP"]);
    const c = p.changes[0]!;
    expect(c.reason).toMatch(
      /^the service holds this SSP policy and git has no file for it\. The interface has no update or delete for SSP policies: deactivate or delete it in the service/,
    );
    expect(c.reason).toMatch(/\(last modified by alice at 2026-01-01T00:00:00Z\)$/);
    expect(c.before).toEqual({
      method: "formula",
      active: true,
      hierarchy_no: 30,
      when: [{ field_name: "product_family", operator: "equality", value: "Services" }],
    });
    expect(c.version_id).toBe("1");
    expect(c).toMatchObject({ modified_by: "alice", modified_on: "2026-01-01T00:00:00.000Z" });
    expect(c.payload).toBeUndefined();
    expect(p.summary).toMatchObject({ not_in_git: 1, create: 0 });
  });

  it("a create whose hierarchy_no an active live policy holds is blocked, naming both; a renamed policy is said to look like a rename", () => {
    const { desired, live } = base();
    const hw = desired.ssp.find((d) => d.name === "Hardware SSP")!;
    // Renamed in git (file and metadata.name): the old name is live and not in git, with the same conditions.
    hw.name = "Hardware Devices SSP";
    hw.spec = { ...hw.spec, floor_percentage: 85, ceiling_percentage: 115 };
    const p = plan(desired, live);
    expect(actions(p)).toEqual([
      "blocked ssp/Hardware Devices SSP",
      "blocked ssp/Hardware Devices SSP/batch/FY25-H2",
      "blocked ssp/Hardware Devices SSP/batch/FY26-H1",
      "blocked ssp/Hardware Devices SSP/batch/FY26-H2",
      "not_in_git ssp/Hardware SSP",
    ]);
    expect(p.changes[0]?.reason).toBe(
      'hierarchy_no 10 is held by the active live policy "Hardware SSP", which is not in git and has the same conditions: this looks like a rename. The interface cannot rename, update or delete an SSP policy: deactivate or delete "Hardware SSP" in the service first (then plan again: it creates "Hardware Devices SSP"), or keep the old name in git',
    );
    expect(p.changes[1]?.reason).toBe("the create of ssp/Hardware Devices SSP is blocked, so nothing is done for its batches");
    // Another policy on a place a git-managed policy holds: blocked, naming it.
    desired.ssp.push(newPolicy({ hierarchy_no: 20 }, "Edge SSP"));
    const edge = plan(desired, live).changes.find((c) => c.address === "ssp/Edge SSP");
    expect(edge?.action).toBe("blocked");
    expect(edge?.reason).toMatch(/^hierarchy_no 20 is held by the active live policy "Software Subscriptions SSP": two policies in one place of the hierarchy/);
  });

  it("two creates at one place of the hierarchy (validate only warns of it): both blocked, each naming the other; an inactive one takes no place", () => {
    const { desired, live } = base();
    desired.ssp.push(newPolicy({ hierarchy_no: 600 }, "One SSP"), newPolicy({ hierarchy_no: 600 }, "Two SSP"));
    const p = plan(desired, live);
    expect(p.changes.filter((c) => /^ssp\/(One|Two) SSP$/.test(c.address)).map((c) => [c.action, c.reason])).toEqual([
      [
        "blocked",
        'hierarchy_no 600 is also given to policy "Two SSP" in git, which this plan creates too: two policies in one place of the hierarchy make it undefined which one prices an order line, so revsync creates neither; give each its own hierarchy_no',
      ],
      ["blocked", expect.stringMatching(/^hierarchy_no 600 is also given to policy "One SSP" in git/)],
    ]);
    desired.ssp[desired.ssp.length - 1]!.spec.active = false;
    expect(actions(plan(desired, live)).filter((a) => /(One|Two) SSP$/.test(a))).toEqual(["create ssp/One SSP", "create ssp/Two SSP"]);
  });

  it("entries are ordered by code point, whatever the machine's locale", () => {
    const { desired, live } = base();
    // Inactive: one place of the hierarchy, so that only the names order them (active ones would be blocked).
    for (const name of ["b SSP", "B SSP", "a SSP", "Ä SSP"]) desired.ssp.push(newPolicy({ hierarchy_no: 500, active: false }, name));
    expect(actions(plan(desired, live))).toEqual(["create ssp/B SSP", "create ssp/a SSP", "create ssp/b SSP", "create ssp/Ä SSP"]);
  });
});
