import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// The literal profile nulls file_id and file_name only where the interface types them null (an SSP
// policy's items and batches); a pending approval types them as strings, so every approvals command
// works against it as against the default profile.
describe("approvals against the literal profile", () => {
  const fx = useEmulatorRepo({ profile: "literal" });
  const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });

  it("list shows the pending uploads with their files; approve and reject act on them", async () => {
    const list = await run(["approvals", "list", "--format", "json"]);
    expect(list.code, list.stderr).toBe(0);
    const pending = JSON.parse(list.stdout).records as { approval_id: string; file_name: string; is_own_upload: boolean }[];
    expect(pending.length).toBeGreaterThanOrEqual(2);
    for (const p of pending) expect(typeof p.file_name).toBe("string");
    // alice may approve only what she did not upload herself.
    const a = pending.find((p) => !p.is_own_upload);
    const b = pending.find((p) => p !== a);
    const approved = await run(["approvals", "approve", a?.approval_id ?? "", "--yes", "--comment", "checked"]);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const rejected = await run(["approvals", "reject", b?.approval_id ?? "", "--yes", "--comment", "wrong file"]);
    expect(rejected.code, rejected.stdout + rejected.stderr).toBe(0);
    const after = JSON.parse((await run(["approvals", "list", "--format", "json"])).stdout).records as { approval_id: string }[];
    expect(after.map((p) => p.approval_id)).not.toContain(a?.approval_id);
    expect(after.map((p) => p.approval_id)).not.toContain(b?.approval_id);
  });
});
