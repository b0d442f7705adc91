import { describe, expect, it } from "vitest";
import { recordHash, type EvidenceRecord } from "./record.js";
import type { StoredRecord } from "./store.js";
import { earlierFileName, recordFileName } from "./store.js";
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
  it("a record's file name is its slot: its environment (and a hash of its exact name) and its sequence", () => {
    const list = chain(["prod", "prod", "prod"]);
    expect(list.map((s) => s.file)).toEqual(["prod-6754af96-000001.json", "prod-6754af96-000002.json", "prod-6754af96-000003.json"]);
    expect(recordFileName({ environment: "pr od", sequence: 12 })).toMatch(/^pr_od-[0-9a-f]{8}-000012\.json$/);
    expect(recordFileName({ environment: "pr od", sequence: 1 })).not.toBe(recordFileName({ environment: "pr_od", sequence: 1 }));
  });

  it("a chain with an edited record does not hold: the last record that holds is the one before it", () => {
    const list = chain(["prod", "sandbox", "prod", "prod"]);
    (list[2]?.record as EvidenceRecord).exit_code = 1;
    const report = verifyChain(list);
    expect(report.broken).toEqual({ prod: { file: list[0]?.file, hash: list[0]?.record?.hash, sequence: 1 } });
    (list[0]?.record as EvidenceRecord).exit_code = 1;
    expect(verifyChain(list).broken).toEqual({ prod: null });
  });

  it("intact chains of two environments, interleaved, pass and give each one's head", () => {
    const list = chain(["prod", "sandbox", "prod", "sandbox", "prod"]);
    const report = verifyChain(list);
    expect(report.ok).toBe(true);
    expect(report.broken).toEqual({});
    expect(report.heads.prod).toEqual({ file: list[4]?.file, hash: list[4]?.record?.hash, sequence: 3 });
    expect(report.heads.sandbox?.sequence).toBe(2);
  });

  it("the order of the folder and the records' clocks say nothing: links and sequence numbers order the chain", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    expect(findings([c, a, b])).toEqual(["intact", "intact", "intact"]);
    expect(verifyChain([c, a, b]).records.map((v) => v.file)).toEqual([a.file, b.file, c.file]);
    // A record written by a runner whose clock is ten minutes behind: still the chain's, and the head.
    const skewed = chain(["prod", "prod", "prod"]).map((s, i) => {
      const r = { ...(s.record as EvidenceRecord), finished_at: new Date(Date.UTC(2026, 10, 24, 6, i === 2 ? -10 : 0, i)).toISOString() };
      return { file: s.file, record: r };
    });
    for (let i = 0; i < skewed.length; i++) {
      const r = skewed[i]?.record as EvidenceRecord;
      if (i > 0) r.prev = (skewed[i - 1]?.record as EvidenceRecord).hash;
      r.hash = recordHash({ ...r, hash: undefined } as unknown as Record<string, unknown>);
    }
    const report = verifyChain(skewed);
    expect(report.ok).toBe(true);
    expect(report.heads.prod?.hash).toBe(skewed[2]?.record?.hash);
  });

  it("an edit, a removal from the middle, a removed start, an unreadable file: each named", () => {
    const edited = chain(["prod", "prod", "prod"]);
    (edited[1]?.record as EvidenceRecord).exit_code = 1;
    expect(findings(edited)).toEqual(["intact", "edited", "intact"]);

    const removed = chain(["prod", "prod", "prod", "prod"]);
    removed.splice(1, 2);
    const r = verifyChain(removed);
    expect(r.records.map((v) => v.findings[0])).toEqual(["intact", "removed"]);
    expect(r.records[1]?.problems[0]).toMatch(/\(records 2 to 3 of environment prod are missing\)$/);

    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    expect(findings([b, c])).toEqual(["removed", "intact"]);
    expect(verifyChain([b, c]).records[0]?.problems[0]).toMatch(/record 1 of environment prod is missing/);

    // A file in no chain is named after the chains.
    expect(findings([a, { file: "x.json", unreadable: "is not valid JSON" }, b])).toEqual(["intact", "intact", "unreadable"]);
  });

  it("a record rewritten with a fresh hash breaks the next link, which names it", () => {
    const list = chain(["prod", "prod", "prod"]);
    const mid = list[1]?.record as EvidenceRecord;
    mid.exit_code = 1;
    mid.hash = recordHash(mid as unknown as Record<string, unknown>);
    const report = verifyChain(list);
    expect(report.records.map((v) => v.findings[0])).toEqual(["intact", "intact", "removed"]);
    expect(report.records[2]?.problems[0]).toContain(`or ${list[1]?.file} was rewritten`);
  });

  it("a sequence that goes back, or skips, is named", () => {
    const [a, b] = chain(["prod", "prod"]) as [StoredRecord, StoredRecord];
    const back = { ...(b.record as EvidenceRecord), sequence: 1 };
    back.hash = recordHash({ ...back, hash: undefined } as unknown as Record<string, unknown>);
    const report = verifyChain([a, { file: earlierFileName(back), record: back }]);
    expect(report.records.find((v) => v.file === earlierFileName(back))?.problems).toEqual([`reordered: its sequence is 1, yet it follows #1 (${a.file})`]);
    const skip = { ...(b.record as EvidenceRecord), sequence: 5 };
    skip.hash = recordHash({ ...skip, hash: undefined } as unknown as Record<string, unknown>);
    expect(verifyChain([a, { file: recordFileName(skip), record: skip }]).records[1]?.problems).toEqual([
      `its sequence is 5, after 1 (${a.file}) (records 2 to 4 of environment prod are missing)`,
    ]);
  });

  it("records an earlier revsync named by when they finished and their hash still verify, under that name only", () => {
    const list = chain(["prod", "prod"]).map((s) => ({ ...s, file: earlierFileName(s.record as EvidenceRecord) }));
    expect(verifyChain(list).ok).toBe(true);
    const report = verifyChain([
      list[0] as StoredRecord,
      { ...(list[1] as StoredRecord), file: (list[1]?.file ?? "").replace(/-[0-9a-f]{12}\.json$/, "-0123456789ab.json") },
    ]);
    expect(report.records[1]?.findings).toEqual(["renamed"]);
  });
});

describe("a duplicate, a fork, a rename", () => {
  it("a copied record is a duplicate, not a fork, and not the head: the chain's last record is", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    const copy = { ...b, file: "prod-6754af96-000009.json" };
    const report = verifyChain([a, b, c, copy]);
    // In chain order: beside the record it copies.
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "renamed+duplicate", "intact"]);
    expect(report.records[2]?.problems).toEqual([
      `renamed: its file name is not the one revsync gave it (${b.file}: its environment and sequence)`,
      `duplicate: a copy of ${b.file} (the same hash)`,
    ]);
    expect(report.heads.prod).toEqual({ file: c.file, hash: c.record?.hash, sequence: 3 });
  });

  it("a forged record inserted with the same prev as a genuine one is a fork, both named; the head is the genuine chain's last", () => {
    const [a, b, c, d] = chain(["prod", "prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord, StoredRecord];
    const forged = { ...(c.record as EvidenceRecord), exit_code: 1, error: "forged", finished_at: "2026-11-24T06:00:01.500Z" } as EvidenceRecord;
    forged.hash = recordHash({ ...forged, hash: undefined } as unknown as Record<string, unknown>);
    const f = { file: earlierFileName(forged), record: forged };
    const report = verifyChain([a, b, f, c, d]);
    const words = `fork: two records follow #2 (${b.file}): ${f.file} and ${c.file}`;
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "forked", "forked", "intact"]);
    expect(report.records[2]?.problems).toEqual([words]);
    expect(report.records[3]?.problems).toEqual([words]);
    expect(report.ok).toBe(false);
    expect(report.heads.prod?.hash).toBe(d.record?.hash);
  });

  it("two records that start one environment's chain (prev none) are a fork too", () => {
    const [a, b] = chain(["prod", "prod"]) as [StoredRecord, StoredRecord];
    const other = { ...(a.record as EvidenceRecord), service_user: "mallory" } as EvidenceRecord;
    other.hash = recordHash({ ...other, hash: undefined } as unknown as Record<string, unknown>);
    const o = { file: earlierFileName(other), record: other };
    const report = verifyChain([a, b, o]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["forked", "forked", "intact"]);
    expect(report.records[0]?.problems).toEqual([`fork: two records start the chain of environment prod (prev none): ${a.file} and ${o.file}`]);
    expect(report.heads.prod?.hash).toBe(b.record?.hash);
  });

  it("a record revsync does not write (no environment, its hash recomputed) is unplaced: named, in no chain, never the head", () => {
    const [a, b, c] = chain(["prod", "prod", "prod"]) as [StoredRecord, StoredRecord, StoredRecord];
    const forged = { ...(b.record as EvidenceRecord), environment: null, service_user: "mallory", approval: "prompt" } as unknown as EvidenceRecord;
    forged.hash = recordHash({ ...forged, hash: undefined } as unknown as Record<string, unknown>);
    const f = { file: "prod-6754af96-000004.json", record: forged };
    const report = verifyChain([a, b, f, c]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "intact", "unplaced"]);
    expect(report.records[3]?.problems).toEqual(["not a record revsync writes, so it belongs to no environment's chain: environment must be string"]);
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
    const report = verifyChain([a, b, c, { file: earlierFileName(twin), record: twin }]);
    expect(report.records.map((v) => v.findings.join("+"))).toEqual(["intact", "intact", "forked", "forked"]);
    expect(report.heads.prod).toEqual({ file: b.file, hash: b.record?.hash, sequence: 2 });
  });

  it("a file whose name is not its slot is named", () => {
    const [a, b] = chain(["prod", "prod"]) as [StoredRecord, StoredRecord];
    const report = verifyChain([a, { ...b, file: "prod-6754af96-000007.json" }]);
    expect(report.records[1]?.findings).toEqual(["renamed"]);
    expect(report.records[1]?.problems[0]).toMatch(/^renamed: its file name is not the one revsync gave it \(prod-6754af96-000002\.json/);
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
  const content = (error: string | null = null, o: Partial<EvidenceRecord> = {}) => {
    const { prev: _p, hash: _h, sequence: _s, ...rest } = recordOf({ error, ...o });
    return rest as never;
  };

  it("links to the environment's last record, blanks secrets before the hash is taken, never writes over a file", async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { appendRecord, readRecords } = await import("./store.js");
    const dir = mkdtempSync(join(tmpdir(), "revsync-append-"));
    try {
      const redact = (t: string) => t.replaceAll("s3cret-token", "[redacted]");
      const first = appendRecord(dir, content(), redact);
      const second = appendRecord(dir, content("sign-in failed: s3cret-token refused", { finished_at: "2026-11-24T06:00:01.000Z" }), redact);
      expect(second.record).toMatchObject({ sequence: 2, prev: first.record.hash, error: "sign-in failed: [redacted] refused" });
      expect(readFileSync(second.path, "utf8")).not.toContain("s3cret");
      expect(verifyChain(readRecords(dir)).ok).toBe(true);
      const { writeFileExclusive } = await import("../fs-atomic.js");
      const before = readFileSync(first.path, "utf8");
      expect(() => writeFileExclusive(first.path, "{}")).toThrow(/EEXIST/);
      expect(readFileSync(first.path, "utf8")).toBe(before);
      // Redaction goes field by field: a secret that is a JSON word or a key leaves the record whole.
      const words = (t: string) => t.replace(/true|null|error/g, "[redacted]");
      const third = appendRecord(dir, content("true story", { finished_at: "2026-11-24T06:00:02.000Z" }), words);
      expect(JSON.parse(readFileSync(third.path, "utf8"))).toMatchObject({ "[redacted]": "[redacted] story", prev: second.record.hash });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a slot another run took meanwhile is met by linking to its record; a clock behind changes nothing; an earlier revsync's folder is continued from its highest sequence", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { appendRecord, readRecords } = await import("./store.js");
    const dir = mkdtempSync(join(tmpdir(), "revsync-append-"));
    try {
      // An earlier revsync's records, named by when they finished (the second by a clock an hour behind).
      const [a, b] = chain(["prod", "prod"]).map((s, i) => ({ ...(s.record as EvidenceRecord), finished_at: `2026-11-24T0${6 - i}:00:00.000Z` }));
      for (const r of [a, b] as EvidenceRecord[]) {
        r.prev = r === b ? (a as EvidenceRecord).hash : null;
        r.hash = recordHash({ ...r, hash: undefined } as unknown as Record<string, unknown>);
        writeFileSync(join(dir, earlierFileName(r)), `${JSON.stringify(r, null, 2)}\n`);
      }
      const third = appendRecord(dir, content(null, { finished_at: "2026-11-24T05:00:00.000Z" }));
      expect(third.record).toMatchObject({ sequence: 3, prev: (b as EvidenceRecord).hash });
      // Another run's record takes slot 4 (as a run at the same moment does): the next goes after it.
      const other = { ...recordOf({ service_user: "bob" }), sequence: 4, prev: third.record.hash };
      other.hash = recordHash({ ...other, hash: undefined } as unknown as Record<string, unknown>);
      writeFileSync(join(dir, recordFileName(other)), `${JSON.stringify(other, null, 2)}\n`);
      const fifth = appendRecord(dir, content(null, { finished_at: "2026-11-24T04:00:00.000Z" }));
      expect(fifth.record).toMatchObject({ sequence: 5, prev: other.hash });
      const report = verifyChain(readRecords(dir));
      expect([report.ok, report.heads.prod?.hash]).toEqual([true, fifth.record.hash]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
