import { describe, expect, it } from "vitest";
import type { Change } from "../../shared/entries.js";
import type { DesiredSsp } from "./files.js";
import { sspPromotion } from "./promotion.js";
import type { SspLive } from "./read.js";

// One policy as two environments' files read it: the same document, a batch of one name whose item each
// environment takes from its own scoped entry (metadata.environments on a batch).
const policy = (start: string, line = 4): DesiredSsp =>
  ({
    name: "P",
    spec: {},
    batches: [{ name: "B", status: "approved", effective_start_date: start, effective_end_date: "2026-12-31" }],
    source: { file: "policies/p.yaml", line, column: 9 },
    specSource: { file: "policies/p.yaml", line: 5, column: 1 },
  }) as DesiredSsp;
const approve = { address: "ssp/P/batch/B", action: "approve", payload: { kind: "batch", policy: "P", batch: "B" } } as unknown as Change;
const live: SspLive = { ssp: new Map(), values: new Map() } as unknown as SspLive;

describe("an SSP write is promoted only from what the source read from the same document", () => {
  it("blocks a batch this environment dates otherwise than the source, and a policy read from another document", () => {
    const dates = sspPromotion(approve, [policy("2026-01-01")], live, [policy("2026-02-01")]);
    expect(dates.differs).toEqual([{ field: "effective_start_date", source: "2026-01-01", git: "2026-02-01" }]);
    const twin = sspPromotion(approve, [policy("2026-01-01")], live, [policy("2026-01-01", 40)]);
    expect(twin.differs).toEqual([{ field: "file", source: "policies/p.yaml:4", git: "policies/p.yaml:40" }]);
    // The same document and dates: judged by what the source holds (here, no policy yet).
    expect(sspPromotion(approve, [policy("2026-01-01")], live, [policy("2026-01-01")]).notYet).toEqual(['no SSP policy "P"']);
  });
});
