import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "../src/testing/helpers.js";

describe("generated types", () => {
  it("src/schema/generated matches schemas/ (npm run gen:types)", () => {
    let code = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, ["scripts/gen-types.mjs", "--check"], { cwd: ROOT, stdio: "pipe" });
    } catch (e) {
      code = (e as { status: number }).status;
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});
