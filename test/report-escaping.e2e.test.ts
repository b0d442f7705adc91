import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalText } from "../src/report/escape.js";
import { elementsOf, renderGfm, tagsOf, textOf } from "../src/testing/gfm.js";
import { api, cli, DEMO_ENV, sspCreateBody, token, useEmulatorRepo } from "../src/testing/helpers.js";

// Every report escapes what it did not write: names of policies not in git come from the service, so
// anyone who can name a policy writes into the plan and drift that a pull request shows. Through the real
// CLI against the emulator; the markdown is read as a GFM renderer (markdown-it) renders it.

const fx = useEmulatorRepo();
const SSP = "/apis/policy-sets/v1/policy/ssp";
const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });
/** What must never reach a terminal: C0 controls but newline, DEL and C1, bidirectional overrides. */
// eslint-disable-next-line no-control-regex -- exactly those characters
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Policy names as anyone with the service's UI can write them. */
const NAMES = [
  "Legacy <!-- retired",
  "</details>",
  "a | b `c` *d* _e_ [f](https://x.example) # h",
  "&lt;b&gt; & $x$ \\| ~~s~~",
  "- 1. > quote",
  "\u001b[31mRED\u001b[0m \u001b]0;title\u0007 \u009b2J \u202etxt.exe",
  "line one\n   ? ssp/Fake (not in git)",
];

async function nameThem(): Promise<void> {
  const alice = await token(fx.emu.url, "alice");
  for (const [i, name] of NAMES.entries()) {
    const res = await api(fx.emu.url, alice, "POST", SSP, sspCreateBody(name, { hierarchy_no: 200 + i, active: false }));
    expect([name, res.status]).toEqual([name, 200]);
  }
}

describe("names from the service in the plan and drift", () => {
  it("the markdown plan (made and saved, then shown) and drift render one <details> or row per entry, each name as text; the text plan shows control characters as text", async () => {
    await nameThem();
    const json = await run(["plan", "--format", "json", "--out", "named.plan.json"]);
    expect(json.code).toBe(0);
    // JSON keeps the data as it is (what the terminal gets is JSON's own escape of the same text).
    const plan = JSON.parse(json.stdout) as { changes: { address: string; action: string }[] };
    const addresses = plan.changes.map((c) => c.address);
    for (const name of NAMES) expect(addresses).toContain(`ssp/${name}`);
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(json.stdout).not.toMatch(/[\u001b\u009b\u202e]/);

    for (const args of [
      ["plan", "--format", "markdown"],
      ["show", "named.plan.json", "--format", "markdown"],
    ]) {
      const md = await run(args);
      expect(md.code).toBe(0);
      const html = renderGfm(md.stdout);
      // One <details> per entry, nothing else opened, and each summary names its entry as text.
      expect([args[0], tagsOf(html).filter((t) => t === "<details>").length]).toEqual([args[0], plan.changes.length]);
      expect(tagsOf(html).filter((t) => t === "</details>").length).toBe(plan.changes.length);
      expect(tagsOf(html).filter((t) => t === "<summary>").length).toBe(plan.changes.length);
      expect(tagsOf(html).filter((t) => /^<\/?(script|img|a)>$/.test(t))).toEqual([]);
      const summaries = elementsOf(html, "summary").map((s) => textOf(elementsOf(s, "code").at(-1) ?? ""));
      expect(summaries).toEqual(addresses.map(terminalText));
      expect(html.split("<!--")).toHaveLength(2); // the comment's own marker, and no other comment
    }
    const drift = await run(["drift", "--format", "markdown"]);
    expect(drift.code).toBe(2);
    const dhtml = renderGfm(drift.stdout);
    const rows = elementsOf(elementsOf(dhtml, "tbody")[0] ?? "", "tr").map((r) => elementsOf(r, "td").map(textOf));
    for (const name of NAMES) expect(rows.filter((r) => r[1] === terminalText(`ssp/${name}`))).toHaveLength(1);
    expect(tagsOf(dhtml).filter((t) => /^<\/?(details|summary|script|img|a)>$/.test(t))).toEqual([]);
    const report = JSON.parse((await run(["drift", "--format", "json"])).stdout) as { drift: { address: string; diff: unknown[] }[] };
    expect(rows).toHaveLength(report.drift.reduce((n, d) => n + Math.max(1, d.diff.length), 0));

    // Text: every entry is one line, its control characters shown, none sent to the terminal.
    const text = await run(["plan"]);
    expect(text.stdout).not.toMatch(CONTROLS);
    expect(text.stdout).toContain(" ? ssp/\\u001B[31mRED\\u001B[0m \\u001B]0;title\\u0007 \\u009B2J \\u202Etxt.exe (not in git)");
    expect(text.stdout).toContain(" ? ssp/line one\\n   ? ssp/Fake (not in git) (not in git)");
    expect(text.stdout.split("\n").filter((l) => l.startsWith(" ? ssp/"))).toHaveLength(plan.changes.filter((c) => c.action === "not_in_git").length);
    const dtext = await run(["drift"]);
    expect(dtext.stdout).not.toMatch(CONTROLS);
    expect(readFileSync(join(fx.repo, "named.plan.json"), "utf8")).toContain("\\u001b[31mRED");
  });

  it("the service commands' text: an upload named with a newline and escape codes stays on its one line, shown as text", async () => {
    const file = "evil\u001b[2J.csv\nAPR-9999  fake.csv  (order, 1 rows, uploaded by bob)";
    await fx.emu.admin("POST", "uploads", { type: "order", file_name: file, uploaded_by: "mallory\u202e", rows: 3 });
    const shown = "evil\\u001B[2J.csv\\nAPR-9999  fake.csv  (order, 1 rows, uploaded by bob)";
    const list = await run(["approvals", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(CONTROLS);
    expect(list.stdout.split("\n").filter((l) => l.includes(shown))).toEqual([expect.stringContaining("mallory\\u202E")]);
    const dry = await run(["approvals", "approve", "--all", "--comment", "x", "--dry-run"]);
    expect(dry.stdout).not.toMatch(CONTROLS);
    expect(dry.stdout.split("\n").filter((l) => l.includes("APR-9999"))).toEqual([expect.stringMatching(/^ {2}APR-\d+ {2}/)]);
    expect(dry.stdout).toContain(`  ${shown}  (ORDER, 3 rows, uploaded by mallory\\u202E)\n`);
  });

  it("data on stdout (errors --format csv, ssp download): a secret never, escape codes never to a terminal; a pipe gets the service's file as it is", async () => {
    const evil = "\u001b]0;owned\u0007\u001b[2J FAKE";
    const state = await fx.emu.admin<any>("GET", "state");
    const tenant = state.tenants[0];
    tenant.errorTransactions.records[0].error_warning_message = evil;
    // A values file the service holds, with escape codes and the sign-in's password in it.
    const file = `product_id,currency_code\r\n"HW-1\u001b[2J\u001b]0;x\u0007",USD\r\nalice-password,EUR\r\n`;
    tenant.files["FILE-EVIL"] = file;
    await fx.emu.admin("POST", "reset", { state });

    const shown = "\\u001B]0;owned\\u0007\\u001B[2J FAKE";
    for (const args of [
      ["--format", "csv"],
      ["--summary", "--format", "csv"],
    ]) {
      for (const tty of [false, true]) {
        const r = await cli(["errors", "--type", "order", ...args], { cwd: fx.repo, env: DEMO_ENV, tty });
        expect(r.code).toBe(0);
        // A report's cells, wherever the CSV goes: shown as text, one line each (JSON has the exact text).
        expect(r.stdout).not.toMatch(CONTROLS);
        expect(r.stdout).toContain(shown);
      }
    }
    const json = await run(["errors", "--type", "order", "--format", "json"]);
    expect(JSON.parse(json.stdout).records[0].error_warning_message).toBe(evil);

    // To a pipe: the file as the service holds it, but for the secret, blanked out and said.
    const piped = await run(["ssp", "download", "FILE-EVIL"]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(file.replace("alice-password", "[redacted]"));
    expect(piped.stderr).toContain("a secret of revsync's sign-in was blanked out of the data printed");
    // To a terminal: the same, its control characters shown as text, its line ends kept.
    const tty = await cli(["ssp", "download", "FILE-EVIL"], { cwd: fx.repo, env: DEMO_ENV, tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stdout.replace(/\r\n/g, "\n")).not.toMatch(CONTROLS);
    expect(tty.stdout).toBe('product_id,currency_code\r\n"HW-1\\u001B[2J\\u001B]0;x\\u0007",USD\r\n[redacted],EUR\r\n');
    // --output: the file the user names holds the service's bytes whole, with a warning.
    const saved = await run(["ssp", "download", "FILE-EVIL", "--output", "evil.csv"]);
    expect(saved.code).toBe(0);
    expect(readFileSync(join(fx.repo, "evil.csv"), "utf8")).toBe(file);
    expect(saved.stdout + saved.stderr).not.toContain("alice-password");
    expect(saved.stderr).toContain("evil.csv holds a secret of revsync's sign-in");
  });
});
