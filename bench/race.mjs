// npm run race [-- ROUNDS]: two real `revsync apply` processes started together against one environment,
// round after round, against the emulator run as a process with --ignore-if-match (the interface does
// not promise If-Match). Each round: two plans saved from the same state (A sets ui_mode, B sets
// manual_journal_contra_account, each creates a policy at hierarchy_no 70), from two clones of one policy
// repo whose remote is a bare repository on this disk (the environment's lock is a ref of it). Rounds run
// with no fault and with 300 ms of latency on every PATCH and POST, with the lock (--lock-timeout 30s), and
// as a control without it (--lock=false). Prints a table; exits 1 when a locked round broke a rule:
// never two "done" with one change lost, never two policies at one hierarchy_no with both exit 0.
// Not part of the test runs (it costs some 40 processes); test/two-writers.process.test.ts runs one round (npm run test:slow).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, cliProcess, DEMO_ENV, startEmulatorProcess } from "../build/testing/helpers.js";

const ROUNDS = Number(process.argv[2] ?? 5);
const work = mkdtempSync(join(tmpdir(), "revsync-race-"));
const emu = await startEmulatorProcess(["--ignore-if-match"]);

const tenant = (spec) => `apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec: { ${spec} }\n`;
const policy = (name) =>
  `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: ${name} }\nspec: { method: formula, active: true, hierarchy_no: 70, data_identifiers: [product_id], floor_percentage: 85, ceiling_percentage: 115, expression: unit_list_price * 0.8, when: [{ field_name: product_family, operator: equality, value: ${name.replace(/\W/g, "")} }] }\n`;

function clone(dir, remote, files) {
  mkdirSync(join(dir, "policies"), { recursive: true });
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${emu.url}\n    realm: demo\n    lock: git\n`,
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "policies", name), text);
  execFileSync("git", ["init", "-q", dir]);
  execFileSync("git", ["-C", dir, "remote", "add", "origin", remote]);
}

/** One round; what it broke, in words (empty: nothing). */
async function round(n, { latency, lock }) {
  await emu.admin("POST", "reset", { seed: "demo" });
  await emu.admin("DELETE", "faults");
  const base = join(work, String(n));
  const remote = join(base, "remote.git");
  execFileSync("git", ["init", "-q", "--bare", remote]);
  const a = join(base, "a");
  const b = join(base, "b");
  clone(a, `file://${remote}`, { "tc.yaml": tenant("ui_mode: Modern"), "p.yaml": policy("Race A") });
  clone(b, `file://${remote}`, { "tc.yaml": tenant("manual_journal_contra_account: MJ-RACE-B"), "p.yaml": policy("Race B") });
  for (const dir of [a, b]) await cli(["plan", "--out", "p.json", "--quiet"], { cwd: dir, env: DEMO_ENV });
  if (latency)
    await emu.admin("POST", "faults", {
      faults: [
        { kind: "latency", latency_ms: 300, method: "PATCH" },
        { kind: "latency", latency_ms: 300, method: "POST", path: "/policy/ssp" },
      ],
    });
  const args = ["apply", "p.json", "--auto-approve", "--format", "json", ...(lock ? ["--lock-timeout", "30s"] : ["--lock=false"])];
  const [ra, rb] = await Promise.all([cliProcess(args, { cwd: a, env: DEMO_ENV }), cliProcess(args, { cwd: b, env: DEMO_ENV })]);
  const state = await emu.admin("GET", "state");
  const tc = state.tenants[0].tenantConfigurations[0].compliance_spec[0];
  const at70 = state.tenants[0].ssp.filter((p) => p.item.hierarchy_no === 70 && p.item.active !== false).length;
  const broke = [];
  const wrote = { a: ["ui_mode", "Modern"], b: ["manual_journal_contra_account", "MJ-RACE-B"] };
  const done = (r) => {
    try {
      return JSON.parse(r.stdout)
        .outcomes.filter((o) => o.outcome === "done")
        .map((o) => o.action);
    } catch {
      return [];
    }
  };
  for (const [k, r] of [
    ["a", ra],
    ["b", rb],
  ])
    if (done(r).includes("update") && tc[wrote[k][0]] !== wrote[k][1]) broke.push(`${k}'s update reported done, lost`);
  if (at70 > 1 && ra.code === 0 && rb.code === 0) broke.push("two policies at hierarchy_no 70, both exit 0");
  const waited = /is locked by another apply: .* lock id [0-9a-f]{40}/.test(ra.stderr + rb.stderr);
  return { broke, codes: [ra.code, rb.code], waited, at70 };
}

const rows = [];
let failures = 0;
try {
  for (const latency of [false, true])
    for (const lock of [true, false]) {
      const seen = { broke: 0, zeroBoth: 0, waited: 0, twoAt70: 0, lostUpdate: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        const r = await round(`${latency}-${lock}-${i}`, { latency, lock });
        if (r.broke.length) seen.broke++;
        if (r.broke.some((w) => w.includes("lost"))) seen.lostUpdate++;
        if (r.codes.every((c) => c === 0)) seen.zeroBoth++;
        if (r.waited) seen.waited++;
        if (r.at70 > 1) seen.twoAt70++;
        if (lock && r.broke.length) failures++;
        process.stderr.write(
          `${latency ? "latency" : "no fault"}, ${lock ? "lock" : "--lock=false"}, round ${i + 1}: exit ${r.codes.join(" and ")}${r.broke.length ? `; BROKE: ${r.broke.join("; ")}` : ""}\n`,
        );
      }
      rows.push(
        `| ${latency ? "300 ms on PATCH and POST" : "none"} | ${lock ? "held (--lock-timeout 30s)" : "--lock=false"} | ${ROUNDS} | ${seen.broke} | ${seen.lostUpdate} | ${seen.twoAt70} | ${seen.zeroBoth} | ${seen.waited} |`,
      );
    }
} finally {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  [
    "| faults | lock | rounds | rounds that broke a rule | a done update lost | two policies at hierarchy_no 70 | both exit 0 | the waiter named the holder |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
process.exitCode = failures ? 1 : 0;
