import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../fs-atomic.js";
import type { ErrorTransactionRecord, PendingApprovalRecord, SspItem, SspValue, TenantConfigurationEnvelope } from "../schema/generated/api.js";
import { plural } from "../words.js";

export interface UserRecord {
  password: string;
  roles: string[];
  /** The user's e-mail: a password grant may name the user by it, as Keycloak signs in by e-mail by
   *  default; the token then names the user by its user name all the same. */
  email?: string;
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

type Check = (v: unknown, at: string) => string | undefined;
const str: Check = (v, at) => (typeof v === "string" ? undefined : `${at} must be a string`);
const bool: Check = (v, at) => (typeof v === "boolean" ? undefined : `${at} must be true or false`);
const num: Check = (v, at) => (typeof v === "number" && Number.isFinite(v) ? undefined : `${at} must be a number`);
const obj =
  (fields: Record<string, Check>): Check =>
  (v, at) => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return `${at} must be an object`;
    for (const [k, check] of Object.entries(fields)) {
      const problem = check((v as Record<string, unknown>)[k], `${at}.${k}`);
      if (problem) return problem;
    }
    return undefined;
  };
const list =
  (item: Check, min = 0): Check =>
  (v, at) => {
    if (!Array.isArray(v)) return `${at} must be a list`;
    if (v.length < min) return `${at} must hold at least ${plural(min, "item")}`;
    for (const [i, x] of v.entries()) {
      const problem = item(x, `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };
const record =
  (value: Check): Check =>
  (v, at) => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return `${at} must be an object`;
    for (const [k, x] of Object.entries(v)) {
      const problem = value(x, `${at}.${k}`);
      if (problem) return problem;
    }
    return undefined;
  };

const STATE: Check = obj({
  version: (v, at) => (v === 1 ? undefined : `${at} must be 1`),
  seq: num,
  tokens: record(obj({ kind: str, realm: str, user: str, clientId: str, expiresAt: num, session: str })),
  tenants: list(
    obj({
      realm: (v, at) => (typeof v === "string" && v !== "" ? undefined : `${at} must be a non-empty string`),
      environment: str,
      clients: record(str),
      users: record(obj({ password: str, roles: list(str) })),
      tenantConfigurations: list(obj({ compliance_id: str, compliance_name: str, compliance_spec: list(obj({}), 1) })),
      ssp: list(
        obj({
          compliance_id: str,
          compliance_name: str,
          version_id: str,
          last_modified_on: num,
          item: obj({ name: str }),
          batches: list(obj({ batch_name: str, status: str, ssp_values: list(obj({})) })),
        }),
      ),
      files: record(str),
      approvals: obj({ enabled: bool, roles: list(str), records: list(obj({ approval_id: str, status: str, uploaded_by: str })) }),
      errorTransactions: obj({ compliance_id: str, compliance_name: str, records: list(obj({})) }),
    }),
    1,
  ),
});

/** The first structural problem of an emulator state, naming the field; undefined when it is sound.
 *  Checked on start (--state) and on POST /__admin/reset, so that a wrong file is refused at once
 *  rather than answering 500 later. */
export function checkState(v: unknown): string | undefined {
  return STATE(v, "state");
}

export function loadStateFile(path: string): EmulatorState | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`it is not JSON (${(e as Error).message})`);
  }
  const problem = checkState(parsed);
  if (problem) throw new Error(`it is not an emulator state: ${problem}`);
  return parsed as EmulatorState;
}

/** Atomic, and readable by the owner only: the state holds passwords and tokens. */
export function saveStateFile(path: string, state: EmulatorState): void {
  writeFileAtomic(path, JSON.stringify(state), 0o600);
}

export function nextId(state: EmulatorState, prefix: string): string {
  state.seq += 1;
  return `${prefix}${String(state.seq).padStart(6, "0")}`;
}
