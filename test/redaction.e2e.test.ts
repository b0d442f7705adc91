import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownText } from "../src/report/escape.js";
import { api, cli, DEMO_ENV, tempRepo, token, updateBody, useEmulator } from "../src/testing/helpers.js";

// Secrets are blanked out of everything revsync prints and records, whatever their length, and in every
// form a report writes them; a secret that blanking out would garble output with (too short, a word, a
// number, a JSON word, or what a name of the run holds) stops the run before it sends anything.

const fx = useEmulator({ clear: ["requests"] });
const repo = (envName = "demo"): string => {
  const dir = tempRepo(fx.emu.url, "default", envName);
  fx.dirs.push(dir);
  return dir;
};
const journal = async () => (await fx.emu.admin<{ method: string; path: string }[]>("GET", "requests")).filter((e) => !e.path.startsWith("/__admin"));

describe("a secret that cannot be blanked out without harm stops the run before anything is sent", () => {
  it.each(["demo", "true", "null", "ab", "password", "12345678"])("GITHUB_TOKEN=%s: apply refuses, naming the variable, and sends nothing", async (secret) => {
    const dir = repo();
    const r = await cli(["apply", "--auto-approve", "--evidence", "ev"], { cwd: dir, env: { ...DEMO_ENV, GITHUB_TOKEN: secret } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: GITHUB_TOKEN cannot be kept out of revsync's output: it is /m);
    expect(r.stderr).toContain("nothing was sent");
    expect(await journal()).toEqual([]);
    expect(existsSync(join(dir, "ev")) ? readdirSync(join(dir, "ev")).filter((f) => f.endsWith(".json")) : []).toEqual([]);
  });

  it("the refusal is said whole, never through the redactor: a secret that is a word of it does not garble it", async () => {
    const dir = repo();
    const r = await cli(["plan"], { cwd: dir, env: { ...DEMO_ENV, GITHUB_TOKEN: "output" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "Error: GITHUB_TOKEN cannot be kept out of revsync's output: it is 6 characters long: a secret that short could be any word or value revsync prints, and blanking it out would garble them; nothing was sent",
    );
    expect(r.stderr).not.toContain("[redacted]");
    expect(await journal()).toEqual([]);
  });

  it("commands that send nothing go on with an unsafe secret, saying so, and leave it in their output; test --live refuses", async () => {
    const dir = repo();
    const env = { ...DEMO_ENV, GITHUB_TOKEN: "true" };
    for (const args of [["validate"], ["test"], ["completion", "bash"]]) {
      const r = await cli(args, { cwd: dir, env });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toContain("Warning: GITHUB_TOKEN cannot be kept out of revsync's output (it is 4 characters long");
      expect(r.stderr).toContain("this command sends nothing, so it goes on");
      expect(r.stdout + r.stderr).not.toContain("[redacted]");
    }
    const live = await cli(["test", "--live"], { cwd: dir, env });
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/^Error: GITHUB_TOKEN cannot be kept out of revsync's output/m);
    expect(await journal()).toEqual([]);
    // evidence verify sends nothing and goes on; with --live it signs in and reads the service: refused.
    expect((await cli(["apply", "--auto-approve", "--evidence", "ev"], { cwd: dir, env: DEMO_ENV })).code).toBe(0);
    await fx.emu.admin("DELETE", "requests");
    const verify = await cli(["evidence", "verify", "ev"], { cwd: dir, env });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stderr).toContain("this command sends nothing, so it goes on");
    const verifyLive = await cli(["evidence", "verify", "ev", "--live"], { cwd: dir, env });
    expect(verifyLive.code).toBe(1);
    expect(verifyLive.stderr).toMatch(/^Error: GITHUB_TOKEN cannot be kept out of revsync's output/m);
    expect(await journal()).toEqual([]);
  });

  it("a secret the environment's name holds (the evidence's chain is named by it) is refused too, before the sign-in", async () => {
    const dir = repo("staging-eu1");
    const r = await cli(["apply", "--auto-approve", "--evidence", "ev"], { cwd: dir, env: { ...DEMO_ENV, GITHUB_TOKEN: "staging-eu1" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "Error: GITHUB_TOKEN cannot be kept out of revsync's output: the environment's name holds it, and blanking it out would blank the environment's name out of the plan, the output and the evidence; nothing was sent",
    );
    expect(r.stdout + r.stderr).not.toContain("[redacted]");
    expect(await journal()).toEqual([]);
  });
});

describe("a secret in the service's text is blanked out of every report, in every form the report writes it", () => {
  // A secret revsync holds, typed into the service by someone: it holds what markdown, HTML and JSON escape.
  const SECRET = 'k<e>y"s&e|c`r*e_t\\1@x.io';

  it("markdown, JSON and the evidence record show [redacted], never the secret as written or as escaped; the record is valid JSON and verifies", async () => {
    const dir = repo();
    const tok = await token(fx.emu.url);
    const path = "/apis/policy-sets/v1/policy/tenant-configurations";
    const [tc] = (await api(fx.emu.url, tok, "GET", path)).body;
    const sent = await api(fx.emu.url, tok, "PATCH", `${path}/${tc.compliance_id}`, updateBody(tc, { manual_journal_contra_account: `MJ-${SECRET}` }));
    expect(sent.status).toBe(200);
    const env = { ...DEMO_ENV, GITHUB_TOKEN: SECRET };
    const forms = [SECRET, JSON.stringify(SECRET).slice(1, -1), markdownText(SECRET), markdownText(`MJ-${SECRET}`).slice("MJ-".length)];
    const md = await cli(["plan", "--format", "markdown"], { cwd: dir, env });
    const json = await cli(["plan", "--format", "json"], { cwd: dir, env });
    for (const r of [md, json]) {
      expect(r.code, r.stderr).toBe(0);
      for (const f of forms) expect(r.stdout).not.toContain(f);
      expect(r.stdout).toContain("MJ-[redacted]");
      // Said, never silent: the text shown is not the service's.
      expect(r.stderr).toContain(
        "Warning: the value of GITHUB_TOKEN stands in text revsync printed (text from the service or a file, such as a policy's name or a field's value) and is shown there as [redacted]: that text is not what the service or the file holds",
      );
    }
    expect(JSON.parse(json.stdout).format_version).toBe("1");
    const applied = await cli(["apply", "--auto-approve", "--evidence", "ev", "--format", "json"], { cwd: dir, env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toBeTypeOf("object");
    const files = readdirSync(join(dir, "ev")).filter((f) => f.endsWith(".json"));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(dir, "ev", files[0] ?? ""), "utf8");
    for (const f of forms) expect(text).not.toContain(f);
    expect(JSON.parse(text)).toMatchObject({ environment: "demo" });
    expect(text).toContain("MJ-[redacted]");
    expect((await cli(["evidence", "verify", "ev"], { cwd: dir })).code).toBe(0);
  });
});
