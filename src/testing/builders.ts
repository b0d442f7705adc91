/** In-memory builders for unit tests of the pure core: a live state as the
 *  service would answer it (the emulator's own answer functions over a seeded tenant, in either
 *  profile), a desired state from exported files, and the plan's payloads applied to a tenant in memory. */
import { posix } from "node:path";
import { checkValuesText } from "../config/values.js";
import type { ExportedFile } from "../kinds/export-file.js";
import { KINDS, kindOf, kindOfFile } from "../kinds/registry.js";
import type { DesiredBatch, DesiredSsp } from "../kinds/ssp/files.js";
import type { CreatePayload, BatchPayload } from "../kinds/ssp/payload.js";
import type { LivePolicy, SspLive } from "../kinds/ssp/read.js";
import type { DesiredEnvelope } from "../kinds/envelope-list/list.js";
import type { UpdatePayload } from "../kinds/envelope-list/write.js";
import { literalAnswer, type Profile } from "../emulator/profile.js";
import { seedState } from "../emulator/seed.js";
import { batchAction, createSsp, getSsp } from "../emulator/ssp.js";
import { patchEnvelope } from "../emulator/envelope-list.js";
import { TENANT_CONFIGURATIONS } from "../emulator/tenant-configurations.js";
import type { EmulatorState, TenantState } from "../emulator/state.js";
import { ACTIONS, summarize, type Change, type Plan } from "../plan/model.js";
import type { SspEnvelope, SspList, TenantConfigurationList } from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";

export function demoState(): EmulatorState {
  return seedState("demo");
}

/** How a JSON answer reads in a profile: the literal profile's nulls and all. */
type Answer = <T>(body: unknown) => T;

/** What the builders do for one resource kind (dispatched on the kind's name): its live state when the
 *  service holds nothing, and as read from an emulator tenant; git's entry an exported file of it makes;
 *  one of its changes applied in memory through the emulator's own service functions. */
interface KindBuilders {
  empty(): unknown;
  live(t: TenantState, answer: Answer): unknown;
  desired(f: ExportedFile): unknown;
  apply(c: Change, at: { state: EmulatorState; t: TenantState; created: Map<string, string> }): void;
}

const CALLER = { user: "bob", roles: ["Revenue Approver"] };

const BUILDERS: Record<string, KindBuilders> = {
  "tenant-configuration": {
    empty: () => [],
    live: (t, answer) => answer<TenantConfigurationList>(t.tenantConfigurations),
    desired: (f) => ({ name: f.value.metadata.name, spec: structuredClone(f.value.spec), source: { file: f.file, line: 1, column: 1 } }),
    apply(c, { t }) {
      const u = c.payload as UpdatePayload;
      const body = {
        user_name: "bob",
        current_timestamp: "0",
        format_type: "JSON",
        compliance_name: u.compliance_name,
        unique_key: u.unique_key,
        compliance_spec: [u.item],
      };
      patchEnvelope(TENANT_CONFIGURATIONS, t.tenantConfigurations, CALLER, u.compliance_id, body, undefined);
    },
  },
  ssp: {
    empty: () => ({ ssp: new Map(), values: new Map() }),
    live: sspLive,
    desired: sspDesired,
    apply(c, { state, t, created }) {
      if (c.action === "create") {
        const { body } = c.payload as CreatePayload;
        created.set(body.compliance_name, (createSsp(state, t, CALLER, body) as { compliance_id: string }).compliance_id);
        return;
      }
      const b = c.payload as BatchPayload;
      batchAction(t, CALLER, c.action === "review" ? "review" : "approve", b.compliance_id ?? created.get(b.policy) ?? "", b.batch, undefined);
    },
  },
};

/** A kind's builders; a kind of the registry without them is said by name, never taken for another. */
function buildersOf(kind: string): KindBuilders {
  const b = BUILDERS[kind];
  if (!b) throw new Error(`src/testing/builders.ts has no builders of kind ${JSON.stringify(kind)}: add its entry to BUILDERS`);
  return b;
}

/** The kinds the builders know, for a test that checks every kind of the registry has them. */
export const builtKinds = (): string[] => Object.keys(BUILDERS);

/** git's state keyed by kind (what the engines take): every kind of the registry, each shipped kind's
 *  entries at hand for a test to read and change: `ssp`, `tenantConfigs`. */
export class DesiredView extends Map<string, readonly unknown[]> {
  constructor(init: { tenantConfigs?: DesiredEnvelope[]; ssp?: DesiredSsp[] } = {}) {
    super(KINDS.map((k) => [k.name, []]));
    this.set("tenant-configuration", init.tenantConfigs ?? []);
    this.set("ssp", init.ssp ?? []);
  }
  /** A state the engines made, seen as a view (its lists the very ones). */
  static of(state: ReadonlyMap<string, readonly unknown[]>): DesiredView {
    const view = new DesiredView();
    for (const [k, v] of state) view.set(k, v);
    return view;
  }
  get tenantConfigs(): DesiredEnvelope[] {
    return this.get("tenant-configuration") as DesiredEnvelope[];
  }
  set tenantConfigs(v: DesiredEnvelope[]) {
    this.set("tenant-configuration", v);
  }
  get ssp(): DesiredSsp[] {
    return this.get("ssp") as DesiredSsp[];
  }
  set ssp(v: DesiredSsp[]) {
    this.set("ssp", v);
  }
}

/** The service's state keyed by kind (what the engines take): every kind of the registry (holding
 *  nothing unless given), each shipped kind's reads at hand: `tenantConfigs`, `ssp` (the policies by
 *  name) and `batchValues` (by "policy/batch"). */
export class LiveView extends Map<string, unknown> {
  constructor(init: { tenantConfigs?: TenantConfigurationList; ssp?: Map<string, LivePolicy>; values?: SspLive["values"] } = {}) {
    super(KINDS.map((k) => [k.name, buildersOf(k.name).empty()]));
    if (init.tenantConfigs) this.set("tenant-configuration", init.tenantConfigs);
    if (init.ssp || init.values) this.set("ssp", { ssp: init.ssp ?? new Map(), values: init.values ?? new Map() });
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

/** The SSP kind's read of a tenant: every policy, every batch's file and its own values. */
function sspLive(t: TenantState, answer: Answer): SspLive {
  const ssp = new Map<string, LivePolicy>();
  const values: SspLive["values"] = new Map();
  for (const p of t.ssp) {
    const env = answer<SspList>(getSsp(t, p.compliance_name))[0] as SspEnvelope;
    const item = env.compliance_spec?.[0];
    if (!item) continue;
    ssp.set(p.compliance_name, { envelope: env, item, batches: item.batches ?? [] });
    for (const b of p.batches) {
      const name = batchNameOf(b);
      const fileId = item.batches?.find((x) => batchNameOf(x) === name)?.file_id;
      const own = answer<SspList>(getSsp(t, p.compliance_name, name))[0]?.compliance_spec?.[0]?.ssp_values;
      const file = typeof fileId === "string" && t.files[fileId] !== undefined ? { csv: t.files[fileId] } : undefined;
      values.set(`${p.compliance_name}/${name}`, { ...(file ? { file } : {}), ...(Array.isArray(own) ? { values: own } : {}) });
    }
  }
  return { ssp, values };
}

/** What plan, drift and export would read from this tenant (values: every batch's file and its own
 *  values), each kind's as it reads it. */
export function liveOf(t: TenantState, profile: Profile = "default"): LiveView {
  const answer: Answer = <T>(body: unknown): T => (profile === "literal" ? literalAnswer(body) : structuredClone(body)) as T;
  const view = new LiveView();
  for (const k of KINDS) view.set(k.name, buildersOf(k.name).live(t, answer));
  return view;
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

/** git's SSP entry an exported policy file makes, with the values files written beside it. */
function sspDesired(f: ExportedFile): DesiredSsp {
  const source = { file: f.file, line: 1, column: 1 };
  return {
    name: f.value.metadata.name,
    spec: structuredClone(f.value.spec) as DesiredSsp["spec"],
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
  };
}

/** The desired state a repo of exactly these exported files (and their values files) would load: each
 *  file's entry made by its kind's builders. */
export function desiredFrom(files: ExportedFile[]): DesiredView {
  const desired = new DesiredView();
  for (const f of files) {
    const kind = kindOfFile(KINDS, f.value.kind);
    if (!kind) throw new Error(`${f.file}: no kind of the registry has files of kind ${JSON.stringify(f.value.kind)}`);
    desired.set(kind.name, [...(desired.get(kind.name) ?? []), buildersOf(kind.name).desired(f)]);
  }
  return desired;
}

/** Applies a plan's payloads to the tenant through the emulator's own service functions, as the
 *  service would, each change by its kind's builders. Returns the failures (none expected). */
export function applyInMemory(state: EmulatorState, t: TenantState, plan: Plan): string[] {
  const failures: string[] = [];
  const created = new Map<string, string>();
  for (const c of plan.changes) {
    if (!c.payload) continue;
    try {
      const kind = kindOf(KINDS, c.address);
      if (!kind) throw new Error("no kind of the registry has this address");
      buildersOf(kind.name).apply(c, { state, t, created });
    } catch (e) {
      failures.push(`${c.action} ${c.address}: ${(e as Error).message}`);
    }
  }
  return failures;
}
