import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { cli, DEMO_ENV, fleetConfig, fleetState, removeDir, startEmu, tempRepo, type Emu } from "./helpers.js";

// A fleet of 12 environments on one emulator in this process: 11 tenants (realms t01 to t11) under
// /tenants/<realm>, t01 to t06 in step with git (the demo tenant after an apply), t07 to t11 not (the
// demo seed), and "down", whose service nothing answers, fifth in revsync.yaml.
export const REALMS = Array.from({ length: 11 }, (_, i) => `t${String(i + 1).padStart(2, "0")}`);
export const ORDER = [...REALMS.slice(0, 4), "down", ...REALMS.slice(4)];
export const IN_STEP = new Set(REALMS.slice(0, 6));
// One policy test case that holds where Hardware SSP's batch was approved (the tenants in step).
const CASES =
  'apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: US appliance\n    line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, date: "2026-03-01", unit_list_price: 1000 }\n    expect: { policy: Hardware SSP, ssp: 1030 }\n';

/** The fleet's emulator and policy repo (revsync.yaml naming every environment in ORDER, the case above in
 *  tests/), made once for a test file; before each test the emulator holds the fleet's state again, with
 *  no requests journalled and no faults. */
export function useFleet(): { emu: Emu; repo: string } {
  const fx = {} as { emu: Emu; repo: string; state: object };
  beforeAll(async () => {
    fx.emu = await startEmu("demo");
    fx.repo = tempRepo(fx.emu.url);
    expect((await cli(["apply", "--auto-approve", "--quiet"], { cwd: fx.repo, env: DEMO_ENV })).code).toBe(0);
    const applied = (await fx.emu.admin<{ tenants: unknown[] }>("GET", "state")).tenants[0];
    await fx.emu.reset();
    const seeded = (await fx.emu.admin<{ tenants: unknown[] }>("GET", "state")).tenants[0];
    fx.state = fleetState(
      REALMS.map((r) => (IN_STEP.has(r) ? applied : seeded)),
      REALMS,
    );
    writeFileSync(
      join(fx.repo, "revsync.yaml"),
      fleetConfig(
        fx.emu.url,
        ORDER.map((n) => (n === "down" ? { down: n } : { realm: n })),
        "tests: tests\n",
      ),
    );
    mkdirSync(join(fx.repo, "tests"));
    writeFileSync(join(fx.repo, "tests", "cases.yaml"), CASES);
  });
  afterAll(async () => {
    removeDir(fx.repo);
    await fx.emu.close();
  });
  beforeEach(async () => {
    await fx.emu.admin("POST", "reset", { state: fx.state });
    await fx.emu.admin("DELETE", "requests");
    await fx.emu.admin("DELETE", "faults");
  });
  return fx;
}
