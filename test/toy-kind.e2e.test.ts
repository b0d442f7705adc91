import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Registry } from "../src/kinds/kind.js";
import { KINDS } from "../src/kinds/registry.js";
import { api, removeDir, token } from "../src/testing/helpers.js";
import { kindUnderTest } from "./fixtures/kind-under-test.js";
import { greeting, type Greeting } from "./fixtures/toy-kind/kind.js";
import { GreetingService } from "./fixtures/toy-kind/service.js";

// A resource kind added as a contributor adds one: its folder (test/fixtures/toy-kind/: the kind, its
// schemas, its service) and one line of the registry, here. No other file names it: revsync's commands,
// run in process against the emulator (which serves the greetings beside the spec's resources), validate,
// plan, apply (a saved plan, checked against the plan schema the registry makes), drift, export and
// verify evidence for it as for the shipped kinds.
const kinds: Registry = [...KINDS, greeting];

const TC = "tenant-configuration/Default Tenant Configuration";
const greetingFile = (name: string, text: string): string =>
  `apiVersion: revsync/v1\nkind: Greeting\nmetadata: { name: ${name} }\nspec: { text: ${JSON.stringify(text)} }\n`;
const tenantFile = "apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec: { ui_mode: Modern }\n";

describe("a toy kind added from its folder and one registry line: validated, planned, applied, drifted and exported against the emulator", () => {
  const service = new GreetingService([]);
  const { repo, run, url, exportedThenPlanned } = kindUnderTest(kinds, service);
  const held = (name: string): Greeting | undefined => service.greetings.find((g) => g.name === name);
  const reset = (): void => {
    service.greetings.splice(
      0,
      Infinity,
      ...[
        { name: "welcome", text: "Hello", version: 1, changed_by: "alice" },
        { name: "farewell", text: "Bye", version: 3, changed_by: "bob" },
        { name: "legacy", text: "Howdy", version: 7, changed_by: "carol" },
      ],
    );
  };

  it("validate checks its files; a saved plan of it and a tenant update applies; evidence verifies it live; drift is then what git does not hold", async () => {
    reset();
    const dir = repo({
      "policies/tenant-configuration.yaml": tenantFile,
      "policies/greetings.yaml": `${greetingFile("welcome", "Hello, world")}---\n${greetingFile("farewell", "Bye")}`,
    });
    // Its schema refuses a bad file at its line, and only that one.
    writeFileSync(join(dir, "policies", "bad.yaml"), "apiVersion: revsync/v1\nkind: Greeting\nmetadata: { name: odd }\nspec: { txt: Hi }\n");
    const bad = await run(dir, ["validate"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/policies\/bad\.yaml:4:\d+/);
    expect(bad.stdout + bad.stderr).not.toMatch(/greetings\.yaml|tenant-configuration\.yaml/);
    removeDir(join(dir, "policies", "bad.yaml"));

    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    const saved = JSON.parse(readFileSync(join(dir, "p.json"), "utf8"));
    expect(saved.changes.map((c: { action: string; address: string }) => `${c.action} ${c.address}`).sort()).toEqual([
      "not_in_git greeting/legacy",
      "update greeting/welcome",
      `update ${TC}`,
    ]);
    expect(saved.changes.find((c: { address: string }) => c.address === "greeting/welcome").payload).toEqual({
      kind: "greeting",
      name: "welcome",
      text: "Hello, world",
    });
    // The saved plan's schema is the registry's: the shipped kinds alone refuse its address, and its payload
    // is held to the toy's own schema.
    const shipped = await run(dir, ["apply", "p.json", "--auto-approve"], { shipped: true });
    expect(shipped.code).toBe(1);
    expect(shipped.stderr).toMatch(
      /p\.json is not a valid revsync plan, so nothing was applied:\n {2}changes\.\d\.address: must match pattern "\^\(tenant-configuration\|ssp\)\/"/,
    );
    const forged = structuredClone(saved);
    forged.changes.find((c: { address: string }) => c.address === "greeting/welcome").payload.shout = true;
    writeFileSync(join(dir, "forged.json"), JSON.stringify(forged));
    expect((await run(dir, ["apply", "forged.json", "--auto-approve"])).stderr).toMatch(/changes\.\d\.payload\.shout: is not an allowed field/);
    expect(held("welcome")).toMatchObject({ text: "Hello", version: 1 });

    const applied = await run(dir, ["apply", "p.json", "--auto-approve", "--evidence", "evidence"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^done +update +greeting\/welcome: updated$/m);
    expect(applied.stdout).toMatch(new RegExp(`^done +update +${TC}: updated$`, "m"));
    expect(held("welcome")).toMatchObject({ text: "Hello, world", version: 2, changed_by: "alice" });
    const verified = await run(dir, ["evidence", "verify", "evidence", "--live"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain("greeting/welcome");

    const drift = await run(dir, ["drift", "--format", "json"]);
    expect(drift.code).toBe(2);
    expect(JSON.parse(drift.stdout).drift.map((d: { class: string; address: string }) => `${d.class} ${d.address}`)).toEqual(["unmanaged greeting/legacy"]);
  });

  it("a change made since the plan blocks its write, and drift names who made it", async () => {
    reset();
    const dir = repo({ "policies/greetings.yaml": greetingFile("farewell", "See you") });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    const bob = await api(url(), await token(url(), "bob"), "PATCH", "/apis/toy/v1/greetings/farewell", { text: "Farewell" });
    expect(bob.status).toBe(200);
    const applied = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toMatch(/^blocked +update +greeting\/farewell: .*greeting\/farewell changed since the plan \(by bob\)/m);
    expect(held("farewell")).toMatchObject({ text: "Farewell", changed_by: "bob" });
    const drift = JSON.parse((await run(dir, ["drift", "--format", "json", "--target", "greeting/farewell"])).stdout);
    expect(drift.drift).toEqual([
      expect.objectContaining({
        address: "greeting/farewell",
        class: "changed",
        modified_by: "bob",
        diff: [expect.objectContaining({ path: "text", before: "See you", after: "Farewell" })],
      }),
    ]);
  });

  it("export writes its files beside the shipped kinds', and a plan of them is No changes; the shipped kinds alone read none of them", async () => {
    reset();
    const dir = await exportedThenPlanned();
    expect(readdirSync(join(dir, "policies", "greetings")).sort()).toEqual(["farewell.yaml", "legacy.yaml", "welcome.yaml"]);
    expect(readFileSync(join(dir, "policies", "greetings", "legacy.yaml"), "utf8")).toMatch(
      /^kind: Greeting\nmetadata:\n {2}name: legacy\nspec:\n {2}text: Howdy\n/m,
    );
    const alone = await run(dir, ["validate"], { shipped: true });
    expect(alone.code).toBe(1);
    expect(alone.stdout + alone.stderr).toContain(`kind: expected ${KINDS.map((k) => JSON.stringify(k.fileKind)).join(" or ")}, got "Greeting"`);
  });
});
