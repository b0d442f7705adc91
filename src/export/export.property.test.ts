import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import fc from "fast-check";
import { propertyRuns, runsOf } from "../testing/property-runs.js";
import { afterAll, describe, expect, it } from "vitest";
import type { Diagnostic } from "../config/diagnostics.js";
import { environmentVars, loadPolicies, loadRepo, varsFor } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlFile } from "../config/yaml-source.js";
import { unsafeName } from "../config/rules.js";
import { PROFILES, type Profile } from "../emulator/profile.js";
import type { TenantState } from "../emulator/state.js";
import { seedState } from "../emulator/seed.js";
import { buildPlan } from "../plan/build.js";
import { buildDrift } from "../plan/drift.js";
import { isApplied } from "../plan/model.js";
import { DesiredView, liveOf } from "../testing/builders.js";
import { KINDS } from "../kinds/registry.js";
import { setEnvironmentVars } from "./config-vars.js";
import { placeExport, type GitFile } from "./in-place.js";
import { exportFiles, renderFile } from "./mapping.js";

// Export's promise, over random policy repos and random service states, in both answer profiles: after
// `export` into the repo, the repo validates, plans to nothing apply would do (plan --detailed-exitcode
// 0), drifts nowhere (drift 0), and a second export writes nothing. The repo and the service share the
// demo tenant's policies and batches, each side changed at random (statuses, active, floor, the tenant's
// fields, a contra account read through ${contra} of the environment's vars), and git may lack some
// policies, batches and fields the service has: export fills them in. (A policy or batch git has and the
// service lacks is left as it is by design, and plan shows its create: not part of this property.)
// Pure functions in process over a real folder; the CLI runs of the same path are
// test/export-truth.e2e.test.ts.
const DEPTH = { quick: 8, deep: 60 };
const RUNS = runsOf(DEPTH);
const META = { environment: "p", baseUrl: "http://127.0.0.1:1", authUrl: "http://127.0.0.1:1", realm: "demo", user: null, targets: [] };
const STATUS = fc.constantFrom("file uploaded", "reviewed", "approved");

const side = fc.record({
  carves: fc.boolean(),
  contra: fc.stringMatching(/^MJ-[0-9]{3}$/),
  policies: fc.array(fc.record({ active: fc.boolean(), floor: fc.integer({ min: 0, max: 100 }), statuses: fc.array(STATUS, { minLength: 6, maxLength: 6 }) }), {
    minLength: 8,
    maxLength: 8,
  }),
});
const gitEdits = fc.record({
  dropPolicy: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  dropBatch: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  dropField: fc.constantFrom(undefined, "active", "floor_percentage", "when"),
  floorInGit: fc.integer({ min: 0, max: 100 }),
  contraVar: fc.boolean(),
});

/** The demo tenant changed as `s` says. */
type Side = { carves: boolean; contra: string; policies: { active: boolean; floor: number; statuses: string[] }[] };
type Edits = { dropPolicy: boolean[]; dropBatch: boolean[]; dropField: string | undefined; floorInGit: number; contraVar: boolean };

function tenant(s: Side) {
  const t = seedState("demo").tenants[0];
  if (!t) throw new Error("no demo tenant");
  Object.assign(t.tenantConfigurations[0]?.compliance_spec?.[0] ?? {}, { carves_allocation: s.carves, manual_journal_contra_account: s.contra });
  t.ssp.forEach((p, i) => {
    const m = s.policies[i % s.policies.length];
    if (!m) return;
    p.item.active = m.active;
    p.item.floor_percentage = m.floor;
    p.item.ceiling_percentage = m.floor + 20;
    p.batches.forEach((b, j) => (b.status = (m.statuses[j % m.statuses.length] ?? b.status) as typeof b.status));
  });
  return t;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const posixOf = (p: string): string => p.split(sep).join("/");

/** git's policy files as export reads them (each document's value with the environment's variables). */
function gitFiles(dir: string, vars: Record<string, string | number | boolean>): GitFile[] {
  return listYamlFiles(dir).map((abs) => {
    const values: unknown[] = [];
    for (const src of readYamlFile(abs, abs, [], varsFor({ vars }, {}))) if (!src.unresolved?.size) values[src.index] = src.value;
    return { file: posixOf(relative(dir, abs)), text: readFileSync(abs, "utf8"), values };
  });
}

/** One `revsync export` into the repo: what it writes, and revsync.yaml's vars. Returns what it wrote. */
function exportInto(root: string, files: ReturnType<typeof exportFiles>): string[] {
  const dir = join(root, "policies");
  const repo = loadRepo(join(root, "revsync.yaml"), []);
  if (!repo) throw new Error("no repo");
  const vars = environmentVars(repo, "p", {}).vars;
  const read = (f: string): string | undefined => {
    try {
      return readFileSync(join(dir, f), "utf8");
    } catch {
      return undefined;
    }
  };
  const plan = placeExport(files, gitFiles(dir, vars), () => ["Exported by revsync."], read, {
    varHome: (name) => (name in vars ? { kind: "own" } : { kind: "shared", environments: ["p"], where: "comes from the process environment" }),
  });
  expect(plan.broken).toEqual([]);
  expect(plan.refused).toEqual([]);
  const written: string[] = [];
  for (const w of plan.writes) {
    if (read(w.file) === w.text) continue;
    mkdirSync(dirname(join(dir, w.file)), { recursive: true });
    writeFileSync(join(dir, w.file), w.text);
    written.push(w.file);
  }
  if (plan.vars.length) {
    const cfg = readFileSync(join(root, "revsync.yaml"), "utf8");
    const next = setEnvironmentVars(cfg, "p", plan.vars);
    if (next !== cfg) {
      writeFileSync(join(root, "revsync.yaml"), next);
      written.push("revsync.yaml");
    }
  }
  return written;
}

/** A new policy repo with one environment p whose vars give contra. */
function newRepo(contra: string): string {
  const root = mkdtempSync(join(tmpdir(), "revsync-prop-"));
  dirs.push(root);
  writeFileSync(
    join(root, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  p:\n    base_url: http://127.0.0.1:1\n    auth_url: http://127.0.0.1:1\n    realm: demo\n    vars:\n      contra: ${contra}\n`,
  );
  mkdirSync(join(root, "policies"));
  return root;
}

/** An exported file, with `value` in place of its own, and its values files, put into git. */
function putInGit(root: string, f: ReturnType<typeof exportFiles>[number], value: typeof f.value): void {
  const abs = join(root, "policies", f.file);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, renderFile({ ...f, value, specComments: [], batchComments: [] }, []));
  for (const v of f.valuesFiles) {
    mkdirSync(dirname(join(root, "policies", v.file)), { recursive: true });
    writeFileSync(join(root, "policies", v.file), v.text);
  }
}

/** `revsync validate` of the repo, in process: git's desired state, every error failing the test. */
function validated(root: string): DesiredView {
  const diagnostics: Diagnostic[] = [];
  const repo = loadRepo(join(root, "revsync.yaml"), diagnostics, root);
  if (!repo) throw new Error("no repo");
  const { vars, problems } = environmentVars(repo, "p", {});
  const loaded = loadPolicies(repo, varsFor({ vars }, {}), KINDS, "p");
  const errors = [...diagnostics, ...problems, ...loaded.diagnostics].filter((d) => d.severity === "error");
  expect(errors.map((d) => `${d.file}:${d.line} ${d.message}`)).toEqual([]);
  return DesiredView.of(loaded.desired);
}

function check(profile: Profile, service: Side, gitSide: Side, e: Edits): void {
  // The repo: the export of another state of the same tenant, then edited as a team would.
  const before = exportFiles(liveOf(tenant(gitSide), profile), []);
  const root = newRepo(gitSide.contra);
  const inGit: string[] = [];
  before.forEach((f, i) => {
    if (f.value.kind === "SspPolicy" && e.dropPolicy[i % e.dropPolicy.length]) return;
    if (f.value.kind === "SspPolicy") inGit.push(f.value.metadata.name);
    const value = structuredClone(f.value);
    if (value.kind === "TenantConfiguration" && e.contraVar) value.spec.manual_journal_contra_account = "${contra}";
    if (value.kind === "SspPolicy") {
      if (e.dropField) delete value.spec[e.dropField];
      // git holds floor/ceiling whatever the service shows (the literal profile shows null).
      value.spec.floor_percentage ??= e.floorInGit;
      value.spec.ceiling_percentage ??= e.floorInGit + 20;
      value.batches = value.batches?.filter((_b, j) => !e.dropBatch[j % e.dropBatch.length]);
      if (!value.batches?.length) delete value.batches;
    }
    putInGit(root, f, value);
  });

  const t = tenant(service);
  const live = liveOf(t, profile);
  exportInto(root, exportFiles(live, []));

  const desired = validated(root);
  // git's floor and ceiling stay, whatever the service shows (the literal profile shows null).
  for (const d of desired.ssp.filter((x) => inGit.includes(x.name))) {
    expect([d.spec.floor_percentage, d.spec.ceiling_percentage].map((v) => typeof v)).toEqual(["number", "number"]);
  }
  // plan --detailed-exitcode 0, drift 0
  const plan = buildPlan(desired, live, META);
  expect(plan.changes.filter(isApplied)).toEqual([]);
  expect(buildDrift(desired, live, { environment: "p", targets: [] }).drift).toEqual([]);
  // a second export writes nothing
  expect(exportInto(root, exportFiles(live, []))).toEqual([]);
}

describe("export properties over random repos and service states", () => {
  for (const profile of PROFILES) {
    it(`${profile}: after export, validate, plan --detailed-exitcode and drift exit 0, and a second export writes nothing (${RUNS} cases)`, () => {
      fc.assert(
        fc.property(side, side, gitEdits, (service, gitSide, e) => check(profile, service, gitSide, e)),
        propertyRuns(DEPTH),
      );
    });
  }
});

// Text from outside is data (issue 33): whatever text the service holds in names, batch names and
// string fields (variables and their escape, markup, table pipes, backticks, control characters,
// right-to-left marks, `__proto__`, line breaks, quotes, YAML's own syntax, words YAML 1.1 read as
// booleans or null, numbers as text), export writes it so that git reads back the same text: the repo
// validates, plan has nothing apply would do, and a second export writes nothing. Into an empty
// repo (new files) and into a repo that holds the tenant before the change (scalars spliced in place,
// batches added, revsync.yaml's vars set). A name git cannot hold (unsafeName: a control character, a
// dot segment, blanks only) is left out, and plan shows it as not in git, nothing else.
const FRAGMENTS = [
  "${",
  "$${",
  "}",
  "$",
  "HOME",
  "REVSYNC_PASSWORD",
  "<!--",
  "-->",
  "</details>",
  "<b>",
  "|",
  "`",
  "```",
  "\u0000",
  "\u0007",
  "\u001b[31m",
  "\u007f",
  "\u0085",
  "\u2028",
  "\u202e",
  "\u200f",
  "\ufeff",
  // No lone surrogate (half a UTF-16 pair): it is no Unicode text, RFC 8785 has no form for it, and a
  // plan holding one stops with an error naming where it stands (src/canonical-json.ts).
  "__proto__",
  "\n",
  "\r\n",
  "\t",
  "'",
  '"',
  "\\",
  ": ",
  " #",
  "#",
  "- ",
  " ",
  "null",
  "yes",
  "No",
  "~",
  "123",
  "0x1F",
  "1e3",
  "&a",
  "*a",
  "!tag",
  "%",
  "@",
  "?",
  "[",
  "{",
  ".",
  "..",
  "é",
  "𝒳",
  "x",
];
const outsideText = fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: fc.constantFrom(...FRAGMENTS), maxLength: 6 }));
const texts = fc.record({
  tenant: fc.array(outsideText, { minLength: 4, maxLength: 4 }),
  names: fc.array(outsideText, { minLength: 4, maxLength: 4 }),
  batches: fc.array(outsideText, { minLength: 6, maxLength: 6 }),
  fields: fc.array(outsideText, { minLength: 4, maxLength: 4 }),
  intoEmpty: fc.boolean(),
  contraVar: fc.boolean(),
});
type Texts = { tenant: string[]; names: string[]; batches: string[]; fields: string[]; intoEmpty: boolean; contraVar: boolean };

/** The demo tenant with the service's text in its string fields, new policies (copies of its own, each
 *  in a place of the hierarchy of its own) named with it, and new batches of its first policy. */
function oddTenant(x: Texts): TenantState {
  const t = seedState("demo").tenants[0] as TenantState;
  const spec = t.tenantConfigurations[0]?.compliance_spec?.[0] ?? {};
  ["manual_journal_contra_account", "journals_run_currency", "prorate_method", "ui_mode"].forEach((f, i) => Object.assign(spec, { [f]: x.tenant[i] }));
  t.ssp.forEach((p, i) => {
    p.item.type = x.fields[i % x.fields.length] ?? "";
    const cond = p.item.when?.[0];
    if (cond) cond.value = x.fields[(i + 1) % x.fields.length] ?? "";
  });
  const first = t.ssp[0];
  if (!first) throw new Error("no policy");
  // One of a name: a suffix keeps them apart, a bare name stays bare where it is the only one.
  x.names.forEach((text, i) => {
    const name = i === 0 ? text : `${text} ${i}`;
    const copy = structuredClone(t.ssp[i % t.ssp.length] ?? first);
    Object.assign(copy, { compliance_name: name, compliance_id: `SSP-ODD-${i}` });
    copy.item.name = name;
    copy.item.hierarchy_no = 100 + i;
    copy.batches.forEach((b) => (b.policy_name = name));
    t.ssp.push(copy);
  });
  x.batches.forEach((text, j) => {
    const b = structuredClone(first.batches[j % first.batches.length]);
    if (!b) return;
    b.name = b.batch_name = j === 0 ? text : `${text} ${j}`;
    first.batches.push(b);
  });
  return t;
}

function checkText(profile: Profile, x: Texts): void {
  const root = newRepo("MJ-100");
  if (!x.intoEmpty) {
    // git holds the tenant as it was before the service's text came in.
    for (const f of exportFiles(liveOf(tenant({ carves: true, contra: "MJ-100", policies: [] }), profile), [])) {
      const value = structuredClone(f.value);
      if (value.kind === "TenantConfiguration" && x.contraVar) value.spec.manual_journal_contra_account = "${contra}";
      if (value.kind === "SspPolicy") {
        value.spec.floor_percentage ??= 80;
        value.spec.ceiling_percentage ??= 120;
      }
      putInGit(root, f, value);
    }
  }
  const live = liveOf(oddTenant(x), profile);
  exportInto(root, exportFiles(live, []));

  const plan = buildPlan(validated(root), live, META);
  expect(plan.changes.filter(isApplied)).toEqual([]);
  // Only what git cannot hold remains: a policy or batch whose name revsync refuses in a policy file.
  for (const c of plan.changes) {
    expect(c.action).toBe("not_in_git");
    expect(
      c.address
        .replace(/^ssp\//, "")
        .split("/batch/")
        .some((n) => unsafeName(n) !== undefined),
    ).toBe(true);
  }
  expect(exportInto(root, exportFiles(live, []))).toEqual([]);
}

describe("export properties over the service's text", () => {
  for (const profile of PROFILES) {
    it(`${profile}: any text in names, batch names and string fields reads back as itself: validate is clean, plan has nothing to apply, a second export writes nothing (${RUNS} cases)`, () => {
      fc.assert(
        fc.property(texts, (x) => checkText(profile, x)),
        propertyRuns(DEPTH),
      );
    });
  }
});
