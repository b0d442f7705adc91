import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoredEnvelope } from "../src/emulator/envelope-list.js";
import type { Registry } from "../src/kinds/kind.js";
import { KINDS } from "../src/kinds/registry.js";
import { api, removeDir, token } from "../src/testing/helpers.js";
import { kindUnderTest } from "./fixtures/kind-under-test.js";
import { LEGAL_ENTITIES, legalEntity } from "./fixtures/legal-entity/kind.js";
import { legalEntityService } from "./fixtures/legal-entity/service.js";

// A kind of the tenant configuration's shape (a list of envelopes and a full-body PATCH), added as a
// contributor adds one: its definition (test/fixtures/legal-entity/: names, schemas, path, fields) made a
// kind by the building block (src/kinds/envelope-list/), its service the emulator's envelope list, and one
// line of the registry, here. revsync's commands validate, plan, apply (a saved plan), verify evidence,
// drift and export it as they do the tenant configuration.
const kinds: Registry = [...KINDS, legalEntity];

const file = (name: string, spec: string): string => `apiVersion: revsync/v1\nkind: LegalEntity\nmetadata: { name: ${name} }\nspec: ${spec}\n`;
const entity = (id: string, name: string, item: Record<string, unknown>, version: number, by: string): StoredEnvelope => ({
  compliance_id: id,
  compliance_name: name,
  unique_key: `uk-${id}`,
  version_id: String(version),
  last_modified_on: 1767225600 + version,
  last_modified_by: by,
  compliance_spec: [{ guid: `guid-${id}`, ...item }],
});

describe("an envelope kind built from the block in a few lines: validated, planned, applied, drifted and exported against the emulator", () => {
  const entities: StoredEnvelope[] = [];
  const { repo, run, url, exportedThenPlanned } = kindUnderTest(kinds, legalEntityService(entities));
  const held = (name: string) => entities.find((e) => e.compliance_name === name);
  const reset = (): void => {
    entities.splice(
      0,
      Infinity,
      entity("LE-1", "Acme GmbH", { currency: "EUR", fiscal_calendar: "4-4-5", tax_id: "DE123", active: true }, 1, "carol"),
      entity("LE-2", "Acme Inc", { currency: "USD", fiscal_calendar: "calendar", tax_id: "US987", active: true }, 4, "carol"),
      entity("LE-3", "Acme Legacy BV", { currency: "EUR", fiscal_calendar: "calendar", tax_id: "NL555", active: false }, 2, "dave"),
    );
  };

  it("validate checks its files; a saved plan's update applies as the whole body, a field git leaves out kept as the service holds it; evidence verifies it; drift is what git does not hold", async () => {
    reset();
    const dir = repo({ "policies/legal.yaml": `${file("Acme GmbH", "{ currency: CHF, active: true }")}---\n${file("Acme Inc", "{ currency: USD }")}` });
    writeFileSync(join(dir, "policies", "bad.yaml"), file("Odd", "{ currency: 12 }"));
    const bad = await run(dir, ["validate"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/policies\/bad\.yaml:4:\d+/);
    expect(bad.stdout + bad.stderr).not.toMatch(/legal\.yaml/);
    removeDir(join(dir, "policies", "bad.yaml"));

    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    const saved = JSON.parse(readFileSync(join(dir, "p.json"), "utf8"));
    expect(saved.changes.map((c: { action: string; address: string }) => `${c.action} ${c.address}`).sort()).toEqual([
      "not_in_git legal-entity/Acme Legacy BV",
      "update legal-entity/Acme GmbH",
    ]);
    const update = saved.changes.find((c: { action: string }) => c.action === "update");
    expect(update).toMatchObject({ version_id: "1", modified_by: "carol", diff: [expect.objectContaining({ path: "currency", before: "EUR", after: "CHF" })] });
    expect(update.payload).toEqual({
      kind: "update",
      compliance_id: "LE-1",
      compliance_name: "Acme GmbH",
      unique_key: "uk-LE-1",
      item: { currency: "CHF", fiscal_calendar: "4-4-5", tax_id: "DE123", active: true, guid: "guid-LE-1" },
    });

    const applied = await run(dir, ["apply", "p.json", "--auto-approve", "--evidence", "evidence"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^done +update +legal-entity\/Acme GmbH: updated$/m);
    expect(held("Acme GmbH")).toMatchObject({
      version_id: "2",
      last_modified_by: "alice",
      compliance_spec: [expect.objectContaining({ currency: "CHF", tax_id: "DE123" })],
    });
    const verified = await run(dir, ["evidence", "verify", "evidence", "--live"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain("legal-entity/Acme GmbH");

    const drift = await run(dir, ["drift", "--format", "json"]);
    expect(drift.code).toBe(2);
    expect(JSON.parse(drift.stdout).drift.map((d: { class: string; address: string }) => `${d.class} ${d.address}`)).toEqual([
      "unmanaged legal-entity/Acme Legacy BV",
    ]);
  });

  it("a change made since the plan blocks the PATCH (its guard reads right before the send), and drift names who made it", async () => {
    reset();
    const dir = repo({ "policies/legal.yaml": file("Acme Inc", "{ fiscal_calendar: 4-4-5 }") });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    const item = { ...(held("Acme Inc")?.compliance_spec?.[0] as object), tax_id: "US000" };
    const body = { user_name: "bob", current_timestamp: "0", format_type: "JSON", compliance_name: "Acme Inc", unique_key: "uk-LE-2", compliance_spec: [item] };
    expect((await api(url(), await token(url(), "bob"), "PATCH", `${LEGAL_ENTITIES.path}/LE-2`, body)).status).toBe(200);
    const applied = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toMatch(
      /^blocked +update +legal-entity\/Acme Inc: .*changed in the service since the plan \(last changed by bob at [^)]+\): tax_id "US987" -> "US000", version_id 4 -> 5/m,
    );
    expect(held("Acme Inc")?.compliance_spec?.[0]).toMatchObject({ fiscal_calendar: "calendar", tax_id: "US000" });
    const drift = JSON.parse((await run(dir, ["drift", "--format", "json"])).stdout);
    expect(drift.drift).toContainEqual(
      expect.objectContaining({
        address: "legal-entity/Acme Inc",
        class: "changed",
        modified_by: "bob",
        diff: [expect.objectContaining({ path: "fiscal_calendar" })],
      }),
    );
  });

  it("export writes its files into its folder, and a plan of them is No changes", async () => {
    reset();
    const dir = await exportedThenPlanned();
    expect(readdirSync(join(dir, "policies", "legal-entities")).sort()).toEqual(["acme-gmbh.yaml", "acme-inc.yaml", "acme-legacy-bv.yaml"]);
    expect(readFileSync(join(dir, "policies", "legal-entities", "acme-legacy-bv.yaml"), "utf8")).toMatch(
      /^kind: LegalEntity\nmetadata:\n {2}name: Acme Legacy BV\nspec:\n {2}currency: EUR\n {2}fiscal_calendar: calendar\n {2}tax_id: NL555\n {2}active: false\n/m,
    );
  });
});
