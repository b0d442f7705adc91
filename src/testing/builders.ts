/** In-memory builders for unit tests of the pure core: a live state as the
 *  service would answer it (the emulator's own answer functions over a seeded tenant, in either
 *  profile), a desired state from exported files, and the plan's payloads applied to a tenant in memory. */
import { posix } from "node:path";
import { checkValuesText } from "../config/values.js";
import type { ExportedFile } from "../kinds/export-file.js";
import type { DesiredBatch, DesiredSsp } from "../kinds/ssp/files.js";
import type { CreatePayload, BatchPayload } from "../kinds/ssp/payload.js";
import type { LivePolicy, SspLive } from "../kinds/ssp/read.js";
import type { DesiredTenantConfig } from "../kinds/tenant-configuration/files.js";
import type { UpdatePayload } from "../kinds/tenant-configuration/write.js";
import { literalAnswer, type Profile } from "../emulator/profile.js";
import { seedState } from "../emulator/seed.js";
import * as svc from "../emulator/service.js";
import type { EmulatorState, TenantState } from "../emulator/state.js";
import { ACTIONS, summarize, type Change, type Plan } from "../plan/model.js";
import type { SspEnvelope, SspList, TenantConfigurationList } from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";

export function demoState(): EmulatorState {
  return seedState("demo");
}

/** git's state keyed by kind (what the engines take), with each shipped kind's entries at hand for a
 *  test to read and change: `ssp`, `tenantConfigs`. */
export class DesiredView extends Map<string, readonly unknown[]> {
  constructor(init: { tenantConfigs?: DesiredTenantConfig[]; ssp?: DesiredSsp[] } = {}) {
    super([
      ["tenant-configuration", init.tenantConfigs ?? []],
      ["ssp", init.ssp ?? []],
    ]);
  }
  /** A state the engines made, seen as a view (its lists the very ones). */
  static of(state: ReadonlyMap<string, readonly unknown[]>): DesiredView {
    return new DesiredView({ tenantConfigs: state.get("tenant-configuration") as DesiredTenantConfig[], ssp: state.get("ssp") as DesiredSsp[] });
  }
  get tenantConfigs(): DesiredTenantConfig[] {
    return this.get("tenant-configuration") as DesiredTenantConfig[];
  }
  set tenantConfigs(v: DesiredTenantConfig[]) {
    this.set("tenant-configuration", v);
  }
  get ssp(): DesiredSsp[] {
    return this.get("ssp") as DesiredSsp[];
  }
  set ssp(v: DesiredSsp[]) {
    this.set("ssp", v);
  }
}

/** The service's state keyed by kind (what the engines take), with each shipped kind's reads at hand:
 *  `tenantConfigs`, `ssp` (the policies by name) and `batchValues` (by "policy/batch"). */
export class LiveView extends Map<string, unknown> {
  constructor(init: { tenantConfigs?: TenantConfigurationList; ssp?: Map<string, LivePolicy>; values?: SspLive["values"] } = {}) {
    super([
      ["tenant-configuration", init.tenantConfigs ?? []],
      ["ssp", { ssp: init.ssp ?? new Map(), values: init.values ?? new Map() }],
    ]);
  }
  get tenantConfigs(): TenantConfigurationList {
    return this.get("tenant-configuration") as TenantConfigurationList;
  }
  get ssp(): Map<string, LivePolicy> {
    return (this.get("ssp") as SspLive).ssp;
  }
  get batchValues(): SspLive["values"] {
    return (this.get("ssp") as SspLive).values;
  }
}

/** What plan, drift and export would read from this tenant (values: every batch's file and its own values). */
export function liveOf(t: TenantState, profile: Profile = "default"): LiveView {
  const answer = <T>(body: unknown): T => (profile === "literal" ? literalAnswer(body) : structuredClone(body)) as T;
  const tenantConfigs = answer<TenantConfigurationList>(svc.listTenantConfigurations(t));
  const ssp = new Map<string, LivePolicy>();
  const values: SspLive["values"] = new Map();
  for (const p of t.ssp) {
    const env = answer<SspList>(svc.getSsp(t, p.compliance_name))[0] as SspEnvelope;
    const item = env.compliance_spec?.[0];
    if (!item) continue;
    ssp.set(p.compliance_name, { envelope: env, item, batches: item.batches ?? [] });
    for (const b of p.batches) {
      const name = batchNameOf(b);
      const fileId = item.batches?.find((x) => batchNameOf(x) === name)?.file_id;
      const own = answer<SspList>(svc.getSsp(t, p.compliance_name, name))[0]?.compliance_spec?.[0]?.ssp_values;
      const file = typeof fileId === "string" && t.files[fileId] !== undefined ? { csv: t.files[fileId] } : undefined;
      values.set(`${p.compliance_name}/${name}`, { ...(file ? { file } : {}), ...(Array.isArray(own) ? { values: own } : {}) });
    }
  }
  return new LiveView({ tenantConfigs, ssp, values });
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
export function desiredFrom(files: ExportedFile[]): DesiredView {
  const desired = new DesiredView();
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
        const u = p as UpdatePayload;
        svc.patchTenantConfiguration(
          t,
          caller,
          u.compliance_id,
          {
            user_name: "bob",
            current_timestamp: "0",
            format_type: "JSON",
            compliance_name: u.compliance_name,
            unique_key: u.unique_key,
            compliance_spec: [u.item],
          },
          undefined,
        );
      } else if (p.kind === "create") {
        const { body } = p as CreatePayload;
        const res = svc.createSsp(state, t, caller, body) as { compliance_id: string };
        created.set(body.compliance_name, res.compliance_id);
      } else {
        const b = p as BatchPayload;
        const id = b.compliance_id ?? created.get(b.policy) ?? "";
        svc.batchAction(t, caller, c.action === "review" ? "review" : "approve", id, b.batch, undefined);
      }
    } catch (e) {
      failures.push(`${c.action} ${c.address}: ${(e as Error).message}`);
    }
  }
  return failures;
}
