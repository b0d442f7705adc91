import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../fs-atomic.js";
import type { ErrorTransactionRecord, PendingApprovalRecord, SspItem, SspValue, TenantConfigurationEnvelope } from "../schema/generated/api.js";

export interface UserRecord {
  password: string;
  roles: string[];
}

/** A stored SSP batch: the response item plus the CSV it was uploaded as. */
export type StoredBatch = SspItem & { ssp_values: SspValue[] };

export interface StoredSspPolicy {
  compliance_id: string;
  compliance_name: string;
  created_by: string;
  created_on: number;
  last_modified_by: string;
  last_modified_on: number;
  policy_type: string;
  status: string;
  unique_key: string;
  version_id: string;
  item: SspItem;
  batches: StoredBatch[];
}

/** An approval record as stored: is_own_upload is computed per caller on read. */
export type StoredApproval = Omit<PendingApprovalRecord, "is_own_upload">;

export interface TenantState {
  realm: string;
  environment: string;
  clients: Record<string, string>;
  users: Record<string, UserRecord>;
  tenantConfigurations: TenantConfigurationEnvelope[];
  ssp: StoredSspPolicy[];
  files: Record<string, string>;
  approvals: { enabled: boolean; roles: string[]; records: StoredApproval[] };
  errorTransactions: { compliance_id: string; compliance_name: string; records: ErrorTransactionRecord[] };
}

export interface TokenRecord {
  kind: "access" | "refresh";
  realm: string;
  user: string;
  clientId: string;
  expiresAt: number;
  session: string;
}

export interface EmulatorState {
  version: 1;
  seq: number;
  tenants: TenantState[];
  tokens: Record<string, TokenRecord>;
}

export function loadStateFile(path: string): EmulatorState | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  const parsed = JSON.parse(text) as EmulatorState;
  if (parsed.version !== 1 || !Array.isArray(parsed.tenants)) {
    throw new Error(`${path} is not an emulator state file (version 1)`);
  }
  return parsed;
}

/** Atomic, and readable by the owner only: the state holds passwords and tokens. */
export function saveStateFile(path: string, state: EmulatorState): void {
  writeFileAtomic(path, JSON.stringify(state), 0o600);
}

export function nextId(state: EmulatorState, prefix: string): string {
  state.seq += 1;
  return `${prefix}${String(state.seq).padStart(6, "0")}`;
}
