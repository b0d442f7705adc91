import fc from "fast-check";
import { propertyRuns, runsOf } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { PROFILES } from "../emulator/profile.js";
import { valuesFromCsv, valuesToCsv } from "../ssp/csv.js";
import { seedState } from "../emulator/seed.js";
import { createSsp } from "../emulator/ssp.js";
import type { EmulatorState } from "../emulator/state.js";
import { exportFiles } from "../export/mapping.js";
import type { SspCreateBody, SspValueInput } from "../schema/generated/api.js";
import { applyInMemory, desiredFrom, liveOf, type DesiredView } from "../testing/builders.js";
import { planText } from "../report/plan.js";
import { buildPlan } from "./build.js";
import { REASONS } from "../kinds/ssp/plan.js";
import { sspAddress } from "../kinds/ssp/read.js";
import { buildDrift } from "./drift.js";

// Properties of the pure core over random live states (tenant fields, policies of each method,
// batches of each status, values in any order), in both answer profiles:
//  1. export, read back as git, plans to no change;
//  2. random edits in git, planned, then applied to the tenant in memory, leave nothing to plan;
//  3. a live policy removed from git (after random edits) always appears in the plan, as not in git.
const DEPTH = { quick: 25, deep: 300 };
export const RUNS = runsOf(DEPTH);

const META = { environment: "p", baseUrl: "http://127.0.0.1:1", authUrl: "http://127.0.0.1:1", realm: "demo", user: null, targets: [] };
const OPERATORS = ["equality", "inequality", "greater than", "less than", ">=", "<=", "in", "not in", "contains", "starts with", "null"] as const;
const caller = { user: "alice", roles: ["Revenue Analyst", "Revenue Approver"] };

const name = fc.stringMatching(/^[A-Z][A-Za-z0-9 ]{0,14}[A-Za-z0-9]$/);
const condition = fc.record({
  field_name: fc.constantFrom("product_family", "legal_entity", "unit_list_price"),
  operator: fc.constantFrom(...OPERATORS),
  value: fc.string({ maxLength: 8 }),
});
const value = fc.record({
  product_id: fc.stringMatching(/^P-[0-9]{1,3}$/),
  currency_code: fc.constantFrom("USD", "EUR", "GBP"),
  value_type: fc.constantFrom("Amount", "Percent"),
  below_mid_point: fc.integer({ min: 0, max: 50 }),
  mid_point: fc.integer({ min: 50, max: 100 }),
  above_mid_point: fc.integer({ min: 100, max: 150 }),
});
const policyArb = fc.record({
  name,
  method: fc.constantFrom("upload", "formula", "calculator"),
  active: fc.boolean(),
  data_identifiers: fc.uniqueArray(fc.constantFrom("product_id", "currency_code", "legal_entity"), { minLength: 1 }),
  when: fc.array(condition, { maxLength: 3 }),
  floor: fc.integer({ min: 0, max: 100 }),
  spread: fc.integer({ min: 0, max: 100 }),
  batches: fc.array(fc.record({ status: fc.constantFrom("file uploaded", "reviewed", "approved"), values: fc.array(value, { maxLength: 6 }) }), {
    maxLength: 3,
  }),
});
const tenantArb = fc.record({
  carves_allocation: fc.boolean(),
  manual_journal: fc.boolean(),
  manual_journal_contra_account: fc.stringMatching(/^[A-Z0-9-]{1,12}$/),
  distribution_method: fc.constantFrom("Days in Calendar Period", "Prorate"),
});
const liveArb = fc.record({ tenant: tenantArb, policies: fc.uniqueArray(policyArb, { maxLength: 6, selector: (p) => p.name }) });

/** The value type an arbitrary generates. */
type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;
type LiveInput = Of<typeof liveArb>;

/** A tenant holding the random live state, built through the emulator's own create path. */
function tenantFrom(input: LiveInput): { state: EmulatorState; t: NonNullable<EmulatorState["tenants"][0]> } {
  const state = seedState("empty");
  const t = state.tenants[0];
  if (!t) throw new Error("no tenant");
  const demo = seedState("demo").tenants[0];
  t.tenantConfigurations = structuredClone(demo?.tenantConfigurations ?? []);
  Object.assign(t.tenantConfigurations[0]?.compliance_spec?.[0] ?? {}, input.tenant);
  input.policies.forEach((p, i) => {
    const values = (vs: LiveInput["policies"][number]["batches"][number]["values"]): SspValueInput[] =>
      // Unique keys; the order stays random (values in any order).
      vs
        .filter((v, j) => vs.findIndex((w) => w.product_id === v.product_id && w.currency_code === v.currency_code) === j)
        .map((v) => ({ ...v, effective_start_date: "2026-01-01", effective_end_date: "2026-12-31" }) as SspValueInput);
    const body: SspCreateBody = {
      compliance_name: p.name,
      unique_key: p.name,
      format_type: "JSON",
      compliance_spec: [
        {
          active: p.active,
          can_delete: true,
          ceiling_percentage: p.floor + p.spread,
          data_identifiers: p.data_identifiers,
          entity_type: "policy",
          expression: p.method === "formula" ? "unit_list_price * 0.9" : "",
          floor_percentage: p.floor,
          hierarchy_no: i + 1,
          is_user_defined: true,
          method: p.method === "formula" ? "formula" : "upload",
          name: p.name,
          transaction_above_range: "",
          transaction_below_range: "",
          transaction_mid_range: "",
          type: "SSP",
          when: p.when,
          ...(p.method === "formula"
            ? {}
            : {
                batches: p.batches.map((b, j) => ({
                  batch_name: `B${j}`,
                  effective_start_date: "2026-01-01",
                  effective_end_date: "2026-12-31",
                  ssp_values: values(b.values),
                })),
              }),
        },
      ],
    };
    createSsp(state, t, caller, body);
    const stored = t.ssp.find((s) => s.compliance_name === p.name);
    if (!stored) throw new Error("not created");
    if (p.method === "calculator") stored.item.method = "calculator";
    stored.batches.forEach((b, j) => (b.status = p.batches[j]?.status ?? b.status));
  });
  return { state, t };
}

const edits = fc.record({
  rotate: fc.nat({ max: 5 }),
  carves: fc.option(fc.boolean()),
  contra: fc.option(fc.stringMatching(/^MJ-[0-9]{3}$/)),
  newPolicies: fc.array(fc.record({ name: fc.stringMatching(/^New [A-Z]{3}$/), expression: fc.constantFrom("unit_list_price", "unit_list_price * 0.8") }), {
    maxLength: 2,
  }),
  promote: fc.array(fc.nat(), { maxLength: 4 }),
});

const rotate = <T>(list: T[] | undefined, n: number): T[] | undefined =>
  list && list.length ? [...list.slice(n % list.length), ...list.slice(0, n % list.length)] : list;

/** Random edits in git: lists in another order (never a change), values files holding the service's
 *  values in another order, tenant fields, new formula policies, batches moved forward. */
function edit(desired: DesiredView, e: Of<typeof edits>, live: ReturnType<typeof liveOf>): void {
  for (const d of desired.ssp) {
    d.spec.when = rotate(d.spec.when, e.rotate + 1)?.reverse();
    d.spec.data_identifiers = rotate(d.spec.data_identifiers, e.rotate)?.reverse();
    for (const b of d.batches) {
      const held = live.batchValues.get(`${d.name}/${b.name}`);
      const rows = (held?.values ?? (held?.file ? valuesFromCsv(held.file.csv) : [])) as SspValueInput[];
      const shuffled = rotate(rows, e.rotate)?.reverse() ?? [];
      b.values = { text: valuesToCsv(shuffled), file: `${b.name}.csv`, rows: shuffled };
    }
  }
  const tc = desired.tenantConfigs[0];
  if (tc && e.carves !== null) tc.spec.carves_allocation = e.carves;
  if (tc && e.contra !== null) tc.spec.manual_journal_contra_account = e.contra;
  e.newPolicies.forEach((p, i) => {
    if (desired.ssp.some((d) => d.name === p.name)) return;
    desired.ssp.push({
      name: p.name,
      spec: {
        method: "formula",
        active: true,
        hierarchy_no: 100 + i,
        data_identifiers: ["product_id"],
        floor_percentage: 80,
        ceiling_percentage: 120,
        expression: p.expression,
      },
      batches: [],
      source: { file: "new.yaml", line: 1, column: 1 },
      specSource: { file: "new.yaml", line: 5, column: 1 },
    });
  });
  // Batches the export left out (file uploaded) are listed as reviewed or approved; listed ones to approved.
  const all = desired.ssp.filter((d) => d.spec.method !== "formula" && d.spec.method !== undefined);
  for (const n of e.promote) {
    const d = all[n % Math.max(1, all.length)];
    if (!d) continue;
    const b = d.batches[n % Math.max(1, d.batches.length)];
    if (b) b.status = "approved";
    else d.batches.push({ name: `B${n % 3}`, status: n % 2 ? "approved" : "reviewed" });
  }
}

describe("plan properties over random live states", () => {
  for (const profile of PROFILES) {
    it(`${profile}: export, read back as git, plans to no change (${RUNS} cases)`, () => {
      fc.assert(
        fc.property(liveArb, (input) => {
          const { t } = tenantFrom(input);
          const live = liveOf(t, profile);
          const plan = buildPlan(desiredFrom(exportFiles(live, [])), live, META);
          expect(plan.changes).toEqual([]);
        }),
        propertyRuns(DEPTH),
      );
    });

    it(`${profile}: random edits, planned and applied in memory, leave nothing to plan (${RUNS} cases)`, () => {
      fc.assert(
        fc.property(liveArb, edits, (input, e) => {
          const { state, t } = tenantFrom(input);
          const desired = desiredFrom(exportFiles(liveOf(t, profile), []));
          edit(desired, e, liveOf(t, profile));
          const first = buildPlan(desired, liveOf(t, profile), META);
          // The only difference these edits may leave unapplied: a listed batch that the service does not
          // have. Reordered lists and values are no change at all.
          expect(first.changes.filter((c) => c.action === "unsupported" && c.reason !== REASONS.batchMissing)).toEqual([]);
          const actionable = first.changes.filter((c) => c.action !== "unsupported");
          expect(applyInMemory(state, t, { ...first, changes: actionable })).toEqual([]);
          const again = buildPlan(desired, liveOf(t, profile), META);
          expect(again.changes.filter((c) => c.action !== "unsupported")).toEqual([]);
          expect(again.changes).toEqual(first.changes.filter((c) => c.action === "unsupported").map((c) => ({ ...c, ...pickVersion(again, c.address) })));
        }),
        propertyRuns(DEPTH),
      );
    });

    it(`${profile}: a live policy removed from git always appears in the plan, as not in git, and the plan never says "No changes" (${RUNS} cases)`, () => {
      fc.assert(
        fc.property(
          liveArb.filter((i) => i.policies.length > 0),
          edits,
          fc.nat(),
          (input, e, n) => {
            const { t } = tenantFrom(input);
            const live = liveOf(t, profile);
            const desired = desiredFrom(exportFiles(live, []));
            edit(desired, e, live);
            const exported = desired.ssp.filter((d) => live.ssp.has(d.name));
            const removed = exported[n % exported.length] as DesiredView["ssp"][number];
            desired.ssp = desired.ssp.filter((d) => d !== removed);
            const plan = buildPlan(desired, live, META);
            const notInGit = plan.changes.filter((c) => c.action === "not_in_git");
            expect(notInGit.map((c) => c.address)).toEqual([sspAddress.policy(removed.name)]);
            expect(plan.summary.not_in_git).toBe(1);
            expect(planText(plan, { paint: (_c, text) => text })).not.toContain("No changes");
            // Drift names the same thing, the same way.
            const drift = buildDrift(desired, live, { environment: "p", targets: [] });
            expect(drift.drift.filter((d) => d.class === "unmanaged").map((d) => d.address)).toEqual([sspAddress.policy(removed.name)]);
          },
        ),
        propertyRuns(DEPTH),
      );
    });
  }
});

/** The version fields of the change at an address in another plan (unsupported changes keep theirs). */
function pickVersion(plan: ReturnType<typeof buildPlan>, address: string): { version_id: string | null; last_modified_on: number | null } {
  const c = plan.changes.find((x) => x.address === address);
  return { version_id: c?.version_id ?? null, last_modified_on: c?.last_modified_on ?? null };
}
