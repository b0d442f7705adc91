/** In-memory builders for unit tests of the pure core: a live state as the
 *  service would answer it (the emulator's own answer functions over a seeded tenant, in either
 *  profile), a desired state from exported files, and the plan's payloads applied to a tenant in memory. */
import { posix } from "node:path";
import type { DesiredBatch, DesiredState } from "../config/repo.js";
import { checkValuesText } from "../config/values.js";
import { literalAnswer, type Profile } from "../emulator/profile.js";
import { seedState } from "../emulator/seed.js";
import * as svc from "../emulator/service.js";
import type { EmulatorState, TenantState } from "../emulator/state.js";
import type { ExportedFile } from "../export/mapping.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { ACTIONS, summarize, type Change, type Plan } from "../plan/model.js";
import type { SspEnvelope, SspList, TenantConfigurationList } from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";

export function demoState(): EmulatorState {
  return seedState("demo");
}

/** What plan, drift and export would read from this tenant (values: every batch's file, or its values). */
export function liveOf(t: TenantState, profile: Profile = "default"): LiveState {
  const answer = <T>(body: unknown): T => (profile === "literal" ? literalAnswer(body) : structuredClone(body)) as T;
  const tenantConfigs = answer<TenantConfigurationList>(svc.listTenantConfigurations(t));
  const ssp = new Map<string, LivePolicy>();
  const values: LiveState["values"] = new Map();
  for (const p of t.ssp) {
    const env = answer<SspList>(svc.getSsp(t, p.compliance_name))[0] as SspEnvelope;
    const item = env.compliance_spec?.[0];
    if (!item) continue;
    ssp.set(p.compliance_name, { envelope: env, item, batches: item.batches ?? [] });
    for (const b of p.batches) {
      const name = batchNameOf(b);
      const fileId = item.batches?.find((x) => batchNameOf(x) === name)?.file_id;
      values.set(`${p.compliance_name}/${name}`, typeof fileId === "string" && t.files[fileId] !== undefined ? { csv: t.files[fileId] } : b.ssp_values);
    }
  }
  return { tenantConfigs, ssp, values };
}

/** A plan entry with empty defaults, for tests of what consumes plans (rendering, apply order). */
export function changeOf(action: Change["action"], address: string, o: Partial<Change> = {}): Change {
  return { address, action, before: null, after: null, diff: [], version_id: null, last_modified_on: null, ...o };
}

/** A plan of environment "production" holding these entries (and notes), counted, for rendering tests. */
export function planOf(changes: Change[], notes: string[] = []): Plan {
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
    summary: summarize(ACTIONS, changes as unknown as { [k: string]: unknown }[], "action"),
    notes,
    checksum: "sha256:0",
  };
}

/** The desired state a repo of exactly these exported files (and their values files) would load. */
export function desiredFrom(files: ExportedFile[]): DesiredState {
  const desired: DesiredState = { tenantConfigs: [], ssp: [] };
  for (const f of files) {
    const source = { file: f.file, line: 1, column: 1 };
    if (f.value.kind === "TenantConfiguration") desired.tenantConfigs.push({ name: f.value.metadata.name, spec: structuredClone(f.value.spec), source });
    else {
      desired.ssp.push({
        name: f.value.metadata.name,
        spec: structuredClone(f.value.spec),
        source,
        specSource: { ...source, line: 5 },
        batches: (f.value.batches ?? []).map((b) => {
          const path = b.values ? posix.join(posix.dirname(f.file), b.values) : undefined;
          const written = f.valuesFiles.find((v) => v.file === path);
          const batch: DesiredBatch = { name: b.name, status: b.status as DesiredBatch["status"] };
          if (!written) return batch;
          const rows = checkValuesText(written.text, written.file).values;
          return { ...batch, values: { text: written.text, file: posix.basename(written.file), rows }, valuesPath: written.file, valuesShown: written.file };
        }),
      });
    }
  }
  return desired;
}

/** Applies a plan's payloads to the tenant through the emulator's own service functions, as the
 *  service would: the PATCH, the POST and the batch actions. Returns the failures (none expected). */
export function applyInMemory(state: EmulatorState, t: TenantState, plan: Plan): string[] {
  const caller = { user: "bob", roles: ["Revenue Approver"] };
  const failures: string[] = [];
  const created = new Map<string, string>();
  for (const c of plan.changes) {
    const p = c.payload;
    if (!p) continue;
    try {
      if (p.kind === "update") {
        svc.patchTenantConfiguration(
          t,
          caller,
          p.compliance_id,
          {
            user_name: "bob",
            current_timestamp: "0",
            format_type: "JSON",
            compliance_name: p.compliance_name,
            unique_key: p.unique_key,
            compliance_spec: [p.item],
          },
          undefined,
        );
      } else if (p.kind === "create") {
        const res = svc.createSsp(state, t, caller, p.body) as { compliance_id: string };
        created.set(p.body.compliance_name, res.compliance_id);
      } else {
        const id = p.compliance_id ?? created.get(p.policy) ?? "";
        svc.batchAction(t, caller, c.action === "review" ? "review" : "approve", id, p.batch, undefined);
      }
    } catch (e) {
      failures.push(`${c.action} ${c.address}: ${(e as Error).message}`);
    }
  }
  return failures;
}
