import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/model.js";
import { EvidenceRecorder } from "./recorder.js";

const change = (action: string, address: string): Plan["changes"][number] =>
  ({ address, action, before: null, after: null, diff: [], version_id: null, last_modified_on: null }) as unknown as Plan["changes"][number];

describe("the record's summary", () => {
  it("counts what apply acted on by its outcome; the plan's entries apply never acts on are counted apart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-recorder-"));
    try {
      const update = change("update", "tenant-configuration/Default");
      const create = change("create", "ssp/Hardware SSP");
      const plan = {
        checksum: "sha256:x",
        created_at: "2026-11-24T06:00:00.000Z",
        summary: {},
        changes: [update, create, change("not_in_git", "ssp/Old SSP"), change("not_in_git", "ssp/Older SSP")],
      } as unknown as Plan;
      const rec = new EvidenceRecorder({
        dir,
        repoRoot: dir,
        cwd: dir,
        env: { PATH: process.env.PATH },
        environment: "prod",
        baseUrl: "http://127.0.0.1:1",
        authUrl: "http://127.0.0.1:1",
        realm: "prod",
        planFile: null,
        revsyncVersion: "0.0.0",
        ci: null,
        now: () => Date.parse("2026-11-24T06:00:01.000Z"),
        unavailable: null,
        redact: (t) => t,
      });
      rec.setPlan(plan);
      rec.setApproval("auto-approve");
      // Apply's outcome data: two steps that succeeded, one of them confirmed by reading back.
      rec.stepFinished({ step: { change: update } as never, status: "done", outcome: "done", message: "updated" });
      rec.stepFinished({ step: { change: create } as never, status: "done", outcome: "confirmed", message: "confirmed by reading it back" });
      const { record } = await rec.write({ exitCode: 0 });
      expect(record.summary).toEqual({
        done: 1,
        already: 0,
        confirmed: 1,
        blocked: 0,
        failed: 0,
        skipped: 0,
        unknown: 0,
        overwritten: 0,
        breached: 0,
        not_applied: 2,
      });
      expect(record.changes.map((c) => c.outcome)).toEqual(["done", "confirmed", "skipped", "skipped"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
