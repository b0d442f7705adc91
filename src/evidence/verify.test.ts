import { describe, expect, it } from "vitest";
import { recordHash, type EvidenceRecord } from "./record.js";
import type { StoredRecord } from "./store.js";
import { recordFileName } from "./store.js";
import { verifyChain } from "./verify.js";

/** A record as apply writes it (valid against its schema), with overrides; not yet hashed. */
export function recordOf(o: Partial<EvidenceRecord> = {}): EvidenceRecord {
  return {
    format_version: "1",
    kind: "revsync-apply-evidence",
    sequence: 1,
    revsync_version: "0.1.0",
    environment: "prod",
    base_url: "https://ras.example.com",
    auth_url: "https://auth.example.com",
    realm: "acme",
    service_user: "alice",
    started_at: "2026-11-24T06:00:00.000Z",
    finished_at: "2026-11-24T06:00:00.000Z",
    git: { commit: null, clean: null, note: "not a git repository" },
    ci: null,
    plan: { checksum: `sha256:${"0".repeat(64)}`, file: null, created_at: "2026-11-24T06:00:00.000Z", made_by: "alice", targets: [], summary: {} },
    approval: "auto-approve",
    changes: [],
    other_requests: [],
    summary: { done: 0, already: 0, confirmed: 0, blocked: 0, failed: 0, skipped: 0, unknown: 0, overwritten: 0, breached: 0 },
    exit_code: 0,
    interrupted: false,
    error: null,
    prev: null,
    hash: "",
    ...o,
  };
}

/** A chain of records of one or more environments, in the order given, hashed as apply writes them; each
 *  environment its own tenant (realm), as one apply environment per tenant has it. */
function chain(envs: string[]): StoredRecord[] {
  const last = new Map<string, EvidenceRecord>();
  return envs.map((environment, i) => {
    const before = last.get(environment);
    const r = recordOf({
      sequence: (before?.sequence ?? 0) + 1,
      environment,
      realm: `acme-${environment}`,
      finished_at: new Date(Date.UTC(2026, 10, 24, 6, 0, i)).toISOString(),
      prev: before?.hash ?? null,
    });
    r.hash = recordHash(r as unknown as Record<string, unknown>);
    last.set(environment, r);
    return { file: recordFileName(r), record: r };
  });
}
const findings = (list: StoredRecord[]) => verifyChain(list).records.map((v) => v.findings.join("+"));

describe("the chain check", () => {
  it("file names sort in the order records were written", () => {
    const list = chain(["prod", "prod", "prod"]);
    expect(list.map((s) => s.file)).toEqual([...list.map((s) => s.file)].sort());
    expect(list[0]?.file).toMatch(/^20261124T060000\.000Z-prod-[0-9a-f]{12}\.json$/);
  });

  it("intact chains of two environments, interleaved, pass and give each one's head", () => {
    const list = chain(["prod", "sandbox", "prod", "sandbox", "prod"]);
    const report = verifyChain(list);
    expect(report.ok).toBe(true);
    expect(report.heads.prod).toEqual({ file: list[4]?.file, hash: list[4]?.record?.hash, sequence: 3 });
    expect(report.heads.sandbox?.sequence).toBe(2);
  });

  it("an edit, a removal from the middle, a reorder, a removed start, an unreadable file: each named", () => {
    const edited = chain(["prod", "prod", "prod"]);
    (edited[1]?.record as EvidenceRecord).exit_code = 1;
    expect(findings(edited)).toEqual(["intact", "edited", "intact"]);

    const removed = chain(["prod", "prod", "prod", "prod"]);
    removed.splice(1, 2);
    const r = verifyChain(removed);
    expect(r.records.map((v) => v.findings[0])).toEqual(["intact", "removed"]);
    expect(r.records[1]?.problems[0]).toMatch(/\(records 2 to 3 of environment prod are missing\)$/);

    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    expect(findings([a, c, b])).toEqual(["intact", "reordered", "reordered"]);
    expect(findings([b, c])).toEqual(["removed", "intact"]);
    expect(verifyChain([b, c]).records[0]?.problems[0]).toMatch(/record 1 of environment prod is missing/);

    expect(findings([a, { file: "x.json", unreadable: "is not valid JSON" }, b])).toEqual(["intact", "unreadable", "intact"]);
  });

  it("a record rewritten with a fresh hash breaks the next link, which names it", () => {
    const list = chain(["prod", "prod", "prod"]);
    const mid = list[1]?.record as EvidenceRecord;
    mid.exit_code = 1;
    mid.hash = recordHash(mid as unknown as Record<string, unknown>);
    const report = verifyChain(list);
    // Its file name still carries the old hash: that shows too.
    expect(report.records.map((v) => v.findings[0])).toEqual(["intact", "renamed", "removed"]);
    expect(report.records[2]?.problems[0]).toContain(`or ${list[1]?.file} was rewritten`);
  });
});

describe("a duplicate, a fork, a rename", () => {
  it("a copied record is a duplicate, not a reorder, and not the head: the chain's last record is", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    const copy = { ...b, file: b.file.replace(/^20261124T06/, "20261124T07") };
    const report = verifyChain([a, b, c, copy]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "intact", "renamed+duplicate"]);
    expect(report.records[3]?.problems).toEqual([
      `renamed: its file name is not the one revsync gave it (${b.file}: when it finished, its environment, its hash)`,
      `duplicate: a copy of ${b.file} (the same hash)`,
    ]);
    expect(report.heads.prod).toEqual({ file: c.file, hash: c.record?.hash, sequence: 3 });
  });

  it("a forged record inserted with the same prev as a genuine one is a fork, both named", () => {
    const [a, b, c, d] = chain(["prod", "prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord, StoredRecord];
    const forged = { ...(c.record as EvidenceRecord), exit_code: 1, error: "forged", finished_at: "2026-11-24T06:00:01.500Z" } as EvidenceRecord;
    forged.hash = recordHash({ ...forged, hash: undefined } as unknown as Record<string, unknown>);
    const f = { file: recordFileName(forged), record: forged };
    const report = verifyChain([a, b, f, c, d]);
    const words = `fork: two records follow #2 (${b.file}): ${f.file} and ${c.file}`;
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "forked", "forked", "intact"]);
    expect(report.records[2]?.problems).toEqual([words]);
    expect(report.records[3]?.problems).toEqual([words]);
    expect(report.ok).toBe(false);
  });

  it("a record revsync does not write (no environment, its hash recomputed) is unplaced: named, in no chain, never the head", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    const forged = { ...(b.record as EvidenceRecord), environment: null, service_user: "mallory", approval: "prompt" } as unknown as EvidenceRecord;
    forged.hash = recordHash({ ...forged, hash: undefined } as unknown as Record<string, unknown>);
    const f = { file: b.file.replace(/-[0-9a-f]{12}\.json$/, `-${forged.hash.slice(7, 19)}.json`).replace("T060001", "T060001.5"), record: forged };
    const report = verifyChain([a, b, f, c]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "unplaced", "intact"]);
    expect(report.records[2]?.problems).toEqual(["not a record revsync writes, so it belongs to no environment's chain: environment must be string"]);
    expect(report.ok).toBe(false);
    expect(report.heads).toEqual({ prod: { file: c.file, hash: c.record?.hash, sequence: 3 } });
    // A field revsync never writes, and a field of another type, are named the same way.
    const extra = verifyChain([a, { ...b, record: { ...(b.record as EvidenceRecord), signed_by: "mallory" } as EvidenceRecord }]);
    expect(extra.records[1]?.findings).toEqual(["unplaced"]);
    expect(extra.records[1]?.problems[0]).toContain("signed_by is not an allowed field");
  });

  it("two records that follow the last one: neither is the head, the record they follow is", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    const twin = { ...(c.record as EvidenceRecord), exit_code: 1, finished_at: "2026-11-24T06:00:03.000Z" } as EvidenceRecord;
    twin.hash = recordHash({ ...twin, hash: undefined } as unknown as Record<string, unknown>);
    const report = verifyChain([a, b, c, { file: recordFileName(twin), record: twin }]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "forked", "forked"]);
    expect(report.heads.prod).toEqual({ file: b.file, hash: b.record?.hash, sequence: 2 });
  });

  it("a file whose name's hash is not its content's is named", () => {
    const [a, b] = chain(["prod", "prod"]) as [StoredRecord, StoredRecord];
    const report = verifyChain([a, { ...b, file: b.file.replace(/-[0-9a-f]{12}\.json$/, "-0123456789ab.json") }]);
    expect(report.records[1]?.findings).toEqual(["renamed"]);
    expect(report.records[1]?.problems[0]).toMatch(/^renamed: its file name does not end with its hash's first 12 digits/);
  });
});

describe("chains that pose as one another", () => {
  /** A record of its own chain, hashed and named as revsync names records, finished `second`s after 06:00. */
  const lone = (second: number, o: Partial<EvidenceRecord>): StoredRecord => {
    const r = recordOf({ finished_at: new Date(Date.UTC(2026, 10, 24, 6, 0, second)).toISOString(), chain_note: "the first record", ...o });
    r.hash = recordHash(r as unknown as Record<string, unknown>);
    return { file: recordFileName(r), record: r };
  };

  it("an environment whose name differs from another chain's only by case, spaces, how a letter is written or a look-alike letter: both chains named", () => {
    for (const twin of ["Prod", "prod ", " prod", "pro\u200bd", "pr\u043ed", "PR0D", "ｐｒｏｄ"]) {
      const report = verifyChain([...chain(["prod", "prod"]), lone(9, { environment: twin, realm: "other" })]);
      expect([twin, report.ok, report.records.map((v) => v.findings.join("+"))]).toEqual([twin, false, ["look-alike", "look-alike", "look-alike"]]);
      expect(report.records[2]?.problems[0]).toBe(
        `look-alike: environment ${JSON.stringify(twin)} differs from "prod" (${report.records[0]?.file}) only in case, spaces, how a letter is written or letters that look alike; a record of one may pose as the other`,
      );
    }
    const cafe = verifyChain([lone(1, { environment: "caf\u00e9", realm: "a" }), lone(2, { environment: "cafe\u0301", realm: "b" })]);
    expect(cafe.records.map((v) => v.findings)).toEqual([["look-alike"], ["look-alike"]]);
    // Names that differ where a reader sees it are two environments.
    for (const other of ["production", "sandbox", "prod-eu", "prd"])
      expect(verifyChain([...chain(["prod"]), lone(9, { environment: other, realm: "other" })]).ok).toBe(true);
  });

  it("two chains of one tenant (base_url and realm, as a URL reads it): both named, the one that starts anew beside the other said so", () => {
    const real = chain(["prod", "prod"]).map((s) => ({ ...s })) as StoredRecord[];
    const realm = (real[0]?.record as EvidenceRecord).realm;
    const forged = lone(9, { environment: "mallory", base_url: "HTTPS://RAS.example.com/", realm, service_user: "mallory" });
    const report = verifyChain([...real, forged]);
    expect(report.records.map((v) => v.findings)).toEqual([["same-tenant"], ["same-tenant"], ["same-tenant"]]);
    expect(report.records[2]?.problems[0]).toBe(
      `same tenant: the chain of environment "mallory" starts anew (prev none, ${forged.file}) for tenant https://ras.example.com, realm acme-prod, which the chain of environment "prod" (${real[0]?.file}) already records`,
    );
    expect(report.records[0]?.problems[0]).toBe(
      `same tenant: the chain of environment "mallory" (${forged.file}) records tenant https://ras.example.com, realm acme-prod too; one tenant has one chain`,
    );
    // Another realm of the same service is another tenant.
    expect(verifyChain([...real, lone(9, { environment: "mallory", realm: "globex" })]).ok).toBe(true);
  });
});

describe("appending a record", () => {
  it("links to the environment's last record, blanks secrets before the hash is taken, never writes over a file", async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { appendRecord, readRecords } = await import("./store.js");
    const dir = mkdtempSync(join(tmpdir(), "revsync-append-"));
    try {
      const content = (error: string | null) => {
        const { prev: _p, hash: _h, sequence: _s, ...rest } = recordOf({ error });
        return rest as never;
      };
      const redact = (t: string) => t.replaceAll("s3cret-token", "[redacted]");
      const first = appendRecord(dir, content(null), redact);
      const second = appendRecord(
        dir,
        { ...(content("sign-in failed: s3cret-token refused") as object), finished_at: "2026-11-24T06:00:01.000Z" } as never,
        redact,
      );
      expect(second.record).toMatchObject({ sequence: 2, prev: first.record.hash, error: "sign-in failed: [redacted] refused" });
      expect(readFileSync(second.path, "utf8")).not.toContain("s3cret");
      expect(verifyChain(readRecords(dir)).ok).toBe(true);
      const { writeFileExclusive } = await import("../fs-atomic.js");
      const before = readFileSync(first.path, "utf8");
      expect(() => writeFileExclusive(first.path, "{}")).toThrow(/EEXIST/);
      expect(readFileSync(first.path, "utf8")).toBe(before);
      // Redaction goes field by field: a secret that is a JSON word or a key leaves the record whole.
      const words = (t: string) => t.replace(/true|null|error/g, "[redacted]");
      const third = appendRecord(dir, { ...(content("true story") as object), finished_at: "2026-11-24T06:00:02.000Z" } as never, words);
      expect(JSON.parse(readFileSync(third.path, "utf8"))).toMatchObject({ "[redacted]": "[redacted] story", prev: second.record.hash });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
