import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { demoState, liveOf } from "../testing/builders.js";
import { placeExport, valuesNamedIn, type GitFile } from "./in-place.js";
import { exportFiles } from "./mapping.js";

const header = (): string[] => ["Exported by revsync."];
const gitFile = (file: string, text: string, values?: unknown[]): GitFile => ({ file, text, values: values ?? text.split(/^---$/m).map((t) => parse(t)) });

function setup() {
  const t = demoState().tenants[0];
  if (!t) throw new Error("no demo tenant");
  const live = liveOf(t);
  const files = exportFiles(live, []);
  return { t, live, files, hardware: files.find((f) => f.address === "ssp/Hardware SSP") };
}

describe("export into a folder that has policy files", () => {
  it("finds a policy's file by metadata.name whatever its name, changes only what differs, in place, comments and spacing kept", () => {
    const { files } = setup();
    const text = [
      "# our hardware policy, reviewed by finance",
      "apiVersion: revsync/v1",
      "kind: SspPolicy",
      "metadata: { name: Hardware SSP }",
      "spec:",
      "  method: upload            # uploaded ranges",
      "  hierarchy_no: 10",
      "batches:",
      "  - name: FY26-H1",
      "    status: approved        # approve it",
      "    values: values/h1.csv",
      "",
    ].join("\n");
    const plan = placeExport(files, [gitFile("hw.yaml", text)], header, () => undefined);
    const hw = plan.writes.find((w) => w.file === "hw.yaml");
    expect(hw?.created).toBe(false);
    expect(hw?.what).toBe("ssp/Hardware SSP: batch FY25-H2 added, batch FY26-H1 status, batch FY26-H2 added");
    // No second file for the same policy; the other policies git lacks get new files.
    expect(plan.writes.map((w) => w.file)).not.toContain("ssp/hardware-ssp.yaml");
    expect(plan.writes.filter((w) => w.created && w.file.endsWith(".yaml")).map((w) => w.file)).toEqual([
      "default-tenant-configuration.yaml",
      "ssp/software-subscriptions-ssp.yaml",
      "ssp/professional-services-ssp.yaml",
      "ssp/support-renewals-ssp.yaml",
    ]);
    // git's values file keeps its name and gets the service's values; new batches get theirs beside it.
    expect(plan.writes.find((w) => w.file === "values/h1.csv")?.created).toBe(true);
    expect(plan.writes.map((w) => w.file)).toContain("values/hardware-ssp-fy26-h2.csv");
    const edited = parse(hw?.text ?? "");
    expect((edited.batches as { name: string; status: string; values?: string }[]).map((b) => [b.name, b.status, b.values])).toEqual([
      ["FY26-H1", "reviewed", "values/h1.csv"],
      ["FY25-H2", "approved", "values/hardware-ssp-fy25-h2.csv"],
      ["FY26-H2", "file uploaded", "values/hardware-ssp-fy26-h2.csv"],
    ]);
    expect(hw?.text).toContain("# our hardware policy, reviewed by finance");
    expect(hw?.text).toContain("status: reviewed # approve it");
  });

  it("a scalar change alone splices the file: ${VAR}s, flow style, spacing and other documents stay byte for byte", () => {
    const { files, t } = setup();
    const tc = t.tenantConfigurations[0]?.compliance_spec?.[0] as Record<string, unknown>;
    const text = [
      "apiVersion: revsync/v1",
      "kind: TenantConfiguration",
      "metadata: { name: Default Tenant Configuration }",
      "spec:",
      `  carves_allocation: ${!tc.carves_allocation}          # the one that differs`,
      "  manual_journal_contra_account: ${contra}   # a variable, equal to the service's value",
      "---",
      "apiVersion: revsync/v1",
      "kind: SspPolicy",
      "metadata: { name: Training }",
      "spec: { method: formula, expression: unit_list_price,   active: true }",
      "",
    ].join("\n");
    const values = [
      {
        ...parse(text.split("---")[0] ?? ""),
        spec: { carves_allocation: !tc.carves_allocation, manual_journal_contra_account: tc.manual_journal_contra_account },
      },
      parse(text.split("---")[1] ?? ""),
    ];
    const plan = placeExport(files, [gitFile("all.yaml", text, values)], header, () => undefined);
    const all = plan.writes.find((w) => w.file === "all.yaml");
    expect(all?.text).toBe(text.replace(`carves_allocation: ${!tc.carves_allocation} `, `carves_allocation: ${tc.carves_allocation} `));
    expect(all?.what).toBe("tenant-configuration/Default Tenant Configuration: carves_allocation");
    expect(plan.gitOnly).toEqual([{ address: "ssp/Training", file: "all.yaml" }]);
  });

  it("a field the service shows as null keeps git's value (unknown, never overwritten), with a note; run again, nothing more is written", () => {
    const { live } = setup();
    const policy = live.ssp.get("Hardware SSP");
    if (!policy) throw new Error("no Hardware SSP");
    (policy.item as unknown as Record<string, unknown>).floor_percentage = null;
    (policy.item as unknown as Record<string, unknown>).ceiling_percentage = null;
    const withNull = exportFiles(live, []);
    const text =
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Hardware SSP }\nspec:\n  method: upload\n  floor_percentage: 85\n  ceiling_percentage: 115\n";
    const first = placeExport(withNull, [gitFile("hw.yaml", text)], header, () => undefined);
    const hw = first.writes.find((w) => w.file === "hw.yaml")?.text ?? "";
    expect(parse(hw).spec).toEqual({ method: "upload", floor_percentage: 85, ceiling_percentage: 115 });
    expect(hw).not.toContain("left out");
    expect(first.unknown).toEqual(new Map([["ssp/Hardware SSP", [{ field: "floor_percentage" }, { field: "ceiling_percentage" }]]]));
    // A new file for a policy git lacks still leaves the field out, with the comment saying why.
    const created = placeExport(withNull, [], header, () => undefined).writes.find((w) => w.file === "ssp/hardware-ssp.yaml")?.text ?? "";
    expect(created).toContain("# floor_percentage: left out, the service shows null (unknown); it keeps its live value");
    const written = new Map(first.writes.map((w) => [w.file, w.text]));
    const again = placeExport(
      withNull,
      [...written].filter(([f]) => f.endsWith(".yaml")).map(([f, x]) => gitFile(f, x)),
      header,
      (f) => written.get(f),
    );
    expect(again.writes).toEqual([]);
  });

  it("a value from ${VAR}: this environment's own variable takes the service's value and the file keeps ${VAR}; a shared one refuses the field", () => {
    const { files, t } = setup();
    const tc = t.tenantConfigurations[0]?.compliance_spec?.[0] as Record<string, unknown>;
    const text = [
      "apiVersion: revsync/v1",
      "kind: TenantConfiguration",
      "metadata: { name: Default Tenant Configuration }",
      "spec:",
      "  manual_journal_contra_account: ${contra}   # per environment",
      "  journals_run_currency: ${currency}",
      "",
    ].join("\n");
    const value = { ...parse(text), spec: { manual_journal_contra_account: "MJ-OLD", journals_run_currency: "XXX" } };
    const plan = placeExport(files, [gitFile("tc.yaml", text, [value])], header, () => undefined, {
      varHome: (name) =>
        name === "contra" ? { kind: "own" } : { kind: "shared", environments: ["sandbox", "production"], where: "the process environment sets" },
    });
    expect(plan.writes.find((w) => w.file === "tc.yaml")).toBeUndefined();
    expect(plan.vars).toEqual([
      { name: "contra", value: tc.manual_journal_contra_account, what: "tenant-configuration/Default Tenant Configuration: manual_journal_contra_account" },
    ]);
    expect(plan.refused.map((r) => r.message)).toEqual([
      `tenant-configuration/Default Tenant Configuration: journals_run_currency comes from \${currency}, which the process environment sets, and environments sandbox, production read it too: export writes no literal over a variable, and cannot set it there; the service holds ${JSON.stringify(tc.journals_run_currency)}: not exported (set the variable yourself, or give this environment its own entry under vars: in revsync.yaml and export again)`,
    ]);
  });

  it("a file with a YAML error is left as it is, with its place and the reason; the rest is exported; its policies get no second file", () => {
    const { files } = setup();
    const bad = "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Hardware SSP }\nspec:\n  method: [upload\n";
    const good = "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Software Subscriptions SSP }\nspec:\n  active: false\n";
    const plan = placeExport(files, [gitFile("bad.yaml", bad, [undefined]), gitFile("sw.yaml", good)], header, () => undefined);
    expect(plan.broken).toHaveLength(1);
    expect(plan.broken[0]?.file).toBe("bad.yaml");
    expect(plan.broken[0]?.message).toMatch(/^6:1: .+: not updated \(fix the YAML, then export again\)$/);
    expect(plan.writes.map((w) => w.file)).toContain("sw.yaml");
    expect(plan.writes.map((w) => w.file)).not.toContain("bad.yaml");
    expect(plan.writes.map((w) => w.file)).not.toContain("ssp/hardware-ssp.yaml");
    expect(plan.skipped).toContain("ssp/Hardware SSP: not written, bad.yaml may hold it and has a YAML error");
  });

  it("values equal to the service's in another column order are not rewritten; a file that cannot be read with the variables is left as it is", () => {
    const { files } = setup();
    const sw = files.find((f) => f.address === "ssp/Software Subscriptions SSP");
    const q1 = sw?.batchValues.get("FY26-Q1") ?? "";
    const [head, ...rows] = q1
      .trim()
      .split("\n")
      .map((l) => l.split(","));
    const reordered = [[...(head ?? [])].reverse(), ...rows.map((r) => [...r].reverse())].map((r) => r.join(",")).join("\n") + "\n";
    const text =
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Software Subscriptions SSP }\nbatches:\n  - { name: FY26-Q1, status: file uploaded, values: q1.csv }\n";
    const plan = placeExport(
      files,
      [gitFile("sw.yaml", text), gitFile("tc.yaml", "kind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\n", [undefined])],
      header,
      (f) => (f === "q1.csv" ? reordered : undefined),
    );
    expect(plan.writes.map((w) => w.file)).not.toContain("q1.csv");
    expect(plan.writes.map((w) => w.file)).not.toContain("tc.yaml");
    expect(plan.writes.map((w) => w.file)).not.toContain("default-tenant-configuration.yaml");
    expect(plan.skipped).toEqual([
      "tc.yaml holds tenant-configuration/Default Tenant Configuration but could not be read with this environment's variables (revsync validate says why): left as it is",
    ]);
  });

  it("a new values file takes a name no other file has or is named: batch names that read alike, a -2 the folder holds, a file git names but lacks; the same names on every run", () => {
    const t = demoState().tenants[0];
    const hw = t?.ssp.find((p) => p.compliance_name === "Hardware SSP");
    const first = hw?.batches[0];
    if (!t || !hw || !first) throw new Error("no demo Hardware SSP");
    // "X" and "x" both read as hardware-ssp-x.csv in a file name.
    for (const name of ["X", "x"]) hw.batches.push({ ...structuredClone(first), name, batch_name: name });
    const text = [
      "apiVersion: revsync/v1",
      "kind: SspPolicy",
      "metadata: { name: Hardware SSP }",
      "spec: { method: upload }",
      "batches:",
      "  - { name: FY26-H1, status: reviewed, values: values/hardware-ssp-x-4.csv }",
      "  - { name: FY26-H2, status: file uploaded, values: values/software-subscriptions-ssp-fy26-q1.csv }",
      "",
    ].join("\n");
    // Someone else's file, and git's named files not there yet.
    const held = new Map([["ssp/values/hardware-ssp-x-2.csv", "not export's\n"]]);
    const run = (git: GitFile[], folder: Map<string, string>) => {
      const taken = new Set([...folder.keys(), ...valuesNamedIn(git)]);
      const files = exportFiles(liveOf(t), [], taken);
      return placeExport(files, git, header, (f) => folder.get(f), { taken });
    };
    const git = [gitFile("ssp/hw.yaml", text)];
    const plan = run(git, held);
    const written = plan.writes.map((w) => w.file);
    expect(new Set(written).size).toBe(written.length);
    expect(written).not.toContain("ssp/values/hardware-ssp-x-2.csv");
    const batches = (parse(plan.writes.find((w) => w.file === "ssp/hw.yaml")?.text ?? "") as { batches: { name: string; values: string }[] }).batches;
    expect(batches.map((b) => [b.name, b.values])).toEqual([
      ["FY26-H1", "values/hardware-ssp-x-4.csv"],
      ["FY26-H2", "values/software-subscriptions-ssp-fy26-q1.csv"],
      ["FY25-H2", "values/hardware-ssp-fy25-h2.csv"],
      ["X", "values/hardware-ssp-x.csv"],
      ["x", "values/hardware-ssp-x-3.csv"],
    ]);
    // A new policy file's values keep clear of the name git's file gives another batch.
    const sw = parse(plan.writes.find((w) => w.file === "ssp/software-subscriptions-ssp.yaml")?.text ?? "") as { batches: { name: string; values: string }[] };
    expect(sw.batches.find((b) => b.name === "FY26-Q1")?.values).toBe("values/software-subscriptions-ssp-fy26-q1-2.csv");
    // The same state gives the same plan; with what it wrote in the folder, the next run writes nothing.
    expect(run(git, held)).toEqual(plan);
    const folder = new Map([...held, ...plan.writes.map((w): [string, string] => [w.file, w.text])]);
    const yamlFiles = [...folder].filter(([f]) => f.endsWith(".yaml")).map(([f, text]) => gitFile(f, text));
    expect(run(yamlFiles, folder).writes).toEqual([]);
  });
});
