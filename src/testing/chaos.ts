// The chaos scenario, shared by `npm run chaos` (20+ seeds, a table; it loads the built build/testing/)
// and test/chaos.process.test.ts (a few fixed seeds in `npm run test:slow`). One seed: a fresh emulator, a policy repo of ~200 resources to apply, the
// emulator injecting faults (about a quarter of the API requests fail: 503, 502, dropped connections,
// 429s, refusals); apply at most three times; then, faults off, the plan must show no changes and no
// policy may exist twice.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, DEMO_ENV, startEmulatorProcess } from "./helpers.js";

/** The demo sign-in, with real retry waits: chaos is about what the backoff and Retry-After do. */
const CHAOS_ENV = { ...DEMO_ENV, REVSYNC_MAX_RETRY_WAIT_MS: "" };

const FORMULA = (i: number): string => `apiVersion: revsync/v1
kind: SspPolicy
metadata: { name: Chaos Formula ${i} }
spec: { method: formula, active: true, hierarchy_no: ${1000 + i}, data_identifiers: [product_id], floor_percentage: 80, ceiling_percentage: 120, expression: "unit_list_price * 0.${(i % 9) + 1}" }
`;
const UPLOAD = (i: number): string => `apiVersion: revsync/v1
kind: SspPolicy
metadata: { name: Chaos Upload ${i} }
spec: { method: upload, active: true, hierarchy_no: ${2000 + i}, data_identifiers: [product_id], floor_percentage: 80, ceiling_percentage: 120 }
batches:
  - { name: B1, status: approved, values: values.csv }
`;
const CSV =
  "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nP-1,USD,Percent,90,100,110,2026-01-01,2026-06-30\n";

/** A repo: the project's policies/ plus `formulas` formula policies and `uploads` upload policies with a batch. */
export function chaosRepo(url: string, formulas = 160, uploads = 20): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-chaos-"));
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${url}\n    realm: demo\n    vars: { contra_account: MJ-CONTRA-100 }\n`,
  );
  mkdirSync(join(dir, "policies", "chaos"), { recursive: true });
  for (let i = 0; i < formulas; i++) writeFileSync(join(dir, "policies", "chaos", `f${i}.yaml`), FORMULA(i));
  for (let i = 0; i < uploads; i++) {
    mkdirSync(join(dir, "policies", "chaos", `u${i}`));
    writeFileSync(join(dir, "policies", "chaos", `u${i}`, "policy.yaml"), UPLOAD(i));
    writeFileSync(join(dir, "policies", "chaos", `u${i}`, "values.csv"), CSV);
  }
  return dir;
}

/** The chaos faults of a seed; `scale` multiplies every fault's rate (1.5: half as many again). At scale
 *  1 about a quarter of the reads fail (0.12 + 0.08 of 5xx, 0.05 dropped, 0.03 turned away), and of the
 *  writes a few more (an error array besides). */
export function chaosFaults(seed: number, scale = 1): object {
  const p = (x: number): number => Math.min(1, x * scale);
  return {
    seed,
    faults: [
      { kind: "status", status: 503, probability: p(0.12), path: "/apis/" },
      { kind: "status", status: 502, probability: p(0.08), path: "/apis/" },
      { kind: "drop", probability: p(0.025), path: "/apis/" },
      { kind: "drop", probability: p(0.025), after_commit: true, path: "/apis/" },
      { kind: "rate_limit", probability: p(0.03), retry_after: 1, path: "/apis/" },
      { kind: "error_array", probability: p(0.03), method: "POST", path: "/policy/ssp" },
      { kind: "error_array", probability: p(0.03), method: "PATCH" },
      { kind: "token_expiry", access_ttl_s: 3, expire_now: false },
    ],
  };
}

export interface SeedRow {
  seed: number;
  resources: number;
  requests: number;
  faults: number;
  applies: number;
  exit_codes: string;
  final_plan: string;
  converged: boolean;
  duplicates: number;
  seconds: string;
  detail: string;
}

/** One seed. Returns the row of the table. `opts.env`: variables for the applies (tests cap the waits). */
export async function runSeed(
  seed: number,
  opts: { formulas?: number; uploads?: number; maxApplies?: number; env?: Record<string, string>; scale?: number } = {},
): Promise<SeedRow> {
  // The chaos repo holds its own policies only (on the demo seed, the demo's would be "not in git").
  const emu = await startEmulatorProcess(["--seed", "empty"]);
  const dir = chaosRepo(emu.url, opts.formulas ?? 160, opts.uploads ?? 20);
  const started = Date.now();
  try {
    const planned: { changes: unknown[] } = JSON.parse((await cli(["plan", "--format", "json", "--quiet"], { cwd: dir, env: CHAOS_ENV })).stdout);
    const resources = planned.changes.length;
    await emu.admin("POST", "faults", chaosFaults(seed, opts.scale));
    const runs: (number | null)[] = [];
    let lastFailures = "";
    // An error array is a definite refusal (never sent again within a run), and a create is sent at most
    // 3 times: under a quarter of requests failing and 3% refusals a chain of create, review and approve
    // can need more than one apply. Each apply re-sends only what failed (a read that still fails fails
    // only what it feeds); up to 3 (the table reports how many were needed).
    for (let i = 0; i < (opts.maxApplies ?? 3); i++) {
      const r = await cli(["apply", "--auto-approve", "--quiet"], { cwd: dir, env: { ...CHAOS_ENV, ...opts.env } });
      runs.push(r.code);
      lastFailures = `${r.stdout}\n${r.stderr}`
        .split("\n")
        .filter((l) => /^(failed|blocked|skipped) |^Error/.test(l))
        .join("\n");
      if (r.code === 0) break;
    }
    const journal = await emu.admin<{ fault?: unknown }[]>("GET", "requests");
    await emu.admin("DELETE", "faults");
    const final = await cli(["plan", "--detailed-exitcode", "--quiet"], { cwd: dir, env: CHAOS_ENV });
    const state = await emu.admin<{ tenants: { ssp: { compliance_name: string }[] }[] }>("GET", "state");
    const names = (state.tenants[0]?.ssp ?? []).map((p) => p.compliance_name);
    const duplicates = names.length - new Set(names).size;
    const faults = journal.filter((j) => j.fault).length;
    return {
      seed,
      resources,
      requests: journal.length,
      faults,
      applies: runs.length,
      exit_codes: runs.join(","),
      final_plan: final.code === 0 ? "no changes" : `exit ${final.code}`,
      converged: final.code === 0,
      duplicates,
      seconds: ((Date.now() - started) / 1000).toFixed(1),
      detail: final.code === 0 ? "" : `${final.stdout}${final.stderr}\nThe last apply's failures:\n${lastFailures}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await emu.stop();
  }
}
