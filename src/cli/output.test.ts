import { describe, expect, it } from "vitest";
import { processIo } from "./io.js";
import { colorFor, Output, Redactor } from "./output.js";

const tty = { write: () => true, isTTY: true };
const file = { write: () => true, isTTY: false };

describe("colour, decided per stream", () => {
  it("follows each stream's terminal, unless --no-color, NO_COLOR or FORCE_COLOR says otherwise", () => {
    expect(colorFor(tty, false, {})).toBe(true);
    expect(colorFor(file, false, {})).toBe(false);
    expect(colorFor(tty, true, {})).toBe(false);
    expect(colorFor(tty, false, { NO_COLOR: "1" })).toBe(false);
    expect(colorFor(tty, false, { TERM: "dumb" })).toBe(false);
    expect(colorFor(file, false, { FORCE_COLOR: "1" })).toBe(true);
    expect(colorFor(file, false, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(true);
    expect(colorFor(tty, false, { FORCE_COLOR: "0" })).toBe(false);
    expect(colorFor(tty, false, { FORCE_COLOR: "false" })).toBe(false);
    expect(colorFor(file, true, { FORCE_COLOR: "1" })).toBe(false);
  });

  it("a terminal on stdout and a file on stderr: the result is coloured, the warning is not", () => {
    const written = { out: "", err: "" };
    const env = { ...process.env };
    delete process.env.NO_COLOR;
    delete process.env.FORCE_COLOR;
    try {
      const out = new Output(
        new Redactor(),
        { write: (s: string) => (written.out += s), isTTY: true },
        { write: (s: string) => (written.err += s), isTTY: false },
      );
      out.out(out.paint("green", "Valid:"));
      out.warn("careful");
      expect(written.out).toBe("\u001b[32mValid:\u001b[39m\n");
      expect(written.err).toBe("Warning: careful\n");
      expect(out.err.paint("red", "x")).toBe("x");
    } finally {
      process.env = env;
    }
  });

  it("outside text reaches a terminal as text: its escape sequences, C1 controls and bidi marks are shown, revsync's own colours kept", () => {
    const written = { out: "", err: "" };
    const out = new Output(
      new Redactor(),
      { write: (s: string) => (written.out += s), isTTY: true },
      { write: (s: string) => (written.err += s), isTTY: false },
      { io: { ...processIo(), env: {} } },
    );
    // A name that clears the screen, sets the title, uses the one-byte CSI and reverses the line, and one
    // that imitates the mark revsync colours with (it cannot know the run's key).
    const name = "ssp/x\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202etxt.exe";
    const mimic = "\ue000deadbeef\ue00131m";
    out.out(`${out.paint("bold", name)} ${mimic}`);
    out.warn(`careful with ${name}`);
    expect(written.out).toBe(`\u001b[1mssp/x\\u001B[2J\\u001B]0;pwned\\u0007\\u009B31m\\u202Etxt.exe\u001b[22m ${mimic}\n`);
    expect(written.err).toBe("Warning: careful with ssp/x\\u001B[2J\\u001B]0;pwned\\u0007\\u009B31m\\u202Etxt.exe\n");
  });
});

describe("secrets out of output", () => {
  it("a secret taken out (a command that leaves it in its output) is not added back by whoever hands it later, under another holder's name", () => {
    const r = new Redactor();
    r.add("pw", "REVSYNC_PASSWORD");
    r.drop("pw");
    r.add("pw");
    expect(r.redact("a pw b")).toBe("a pw b");
    expect(r.altered()).toEqual([]);
  });

  it("a secret of any length is blanked out, in every form a report writes it: as it is, in JSON, as markdown's and XML's references, as the terminal shows a control character", () => {
    const r = new Redactor();
    const secret = 'pa"ss<w>rd&1\\x@y.z\t';
    r.add(secret);
    r.add("ab");
    const forms = [
      secret,
      JSON.stringify(secret).slice(1, -1),
      "pa&#34;ss&lt;w&gt;rd&amp;1&#92;x&#64;&#8288;y&#46;z\\t",
      "pa&quot;ss&lt;w&gt;rd&amp;1\\x@y.z\t",
      'pa"ss<w>rd&1\\x@y.z\\u0009',
      encodeURIComponent(secret),
      // As markdown shows the JSON of a value: the JSON's backslashes as references.
      "pa&#92;&#34;ss&lt;w&gt;rd&amp;1&#92;&#92;x&#64;&#8288;y&#46;z&#92;t",
    ];
    for (const f of forms) expect(r.redact(`<${f}>`), f).toBe("<[redacted]>");
    // Short secrets are not ignored: blanked out too (and refused before a run: unsafeSecret).
    expect(r.redact("grab")).toBe("gr[redacted]");
  });

  it("text is looked through only where it holds a secret's longest run of letters, which every form keeps as is: each form still blanked out", () => {
    const r = new Redactor();
    const secret = 'pa"ss<w>rd&1\\x@y.z\tLONGER';
    r.add(secret);
    r.add("ghs_0123456789abcdef");
    for (const f of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), "pa&quot;ss&lt;w&gt;rd&amp;1\\x@y.z\tLONGER"])
      expect(r.redact(`<${f}>`), f).toBe("<[redacted]>");
    expect(r.redact("a token ghs_0123456789abcdef, a line")).toBe("a token [redacted], a line");
    expect(r.redact("pa ss rd LONG ghs_01 abcde")).toBe("pa ss rd LONG ghs_01 abcde");
    expect(r.altered()).toEqual(["a token revsync received"]);
  });

  it("secrets that overlap in text are blanked out as one, leaving no part of either; one without a run of letters is looked for in every text", () => {
    const r = new Redactor();
    r.add("abcd-1234-efgh", "REVSYNC_PASSWORD");
    r.add("1234-efgh-ijkl-5678", "REVSYNC_CLIENT_SECRET");
    r.add("12-34-56-78-90");
    // One inside the other, sharing characters, side by side, and in another form.
    expect(r.redact("<abcd-1234-efgh-ijkl-5678>")).toBe("<[redacted]>");
    expect(r.redact("<abcd-1234-efgh>1234-efgh-ijkl-5678")).toBe("<[redacted]>[redacted]");
    expect(r.redact("x1234&#45;efgh-ijkl-5678abcd-1234-efgh")).toBe("x[redacted][redacted]");
    expect(r.altered()).toEqual(["REVSYNC_PASSWORD", "REVSYNC_CLIENT_SECRET"]);
    expect(r.redact("n=12-34-56-78-90;")).toBe("n=[redacted];");
    expect(r.altered()).toEqual(["REVSYNC_PASSWORD", "REVSYNC_CLIENT_SECRET", "a token revsync received"]);
    expect(r.redact("efgh 1234 ijkl 12-34")).toBe("efgh 1234 ijkl 12-34");
  });

  it("JSON output is redacted field by field: a secret that is a JSON word or a key cannot break it", () => {
    let written = "";
    const r = new Redactor();
    for (const s of ["true", "null", "demo", "format_version"]) r.add(s);
    const out = new Output(r, { write: (t: string) => (written += t), isTTY: false }, file);
    out.json({ environment: "demo", four_eyes: true, note: null, said: "true story" });
    expect(JSON.parse(written)).toEqual({ "[redacted]": "1", environment: "[redacted]", four_eyes: true, note: null, said: "[redacted] story" });
  });

  it("refuses, naming the variable and never the secret, a secret so short or so plain that redacting it would garble output", async () => {
    const { unsafeSecretRefusal, unsafeSecrets, unsafeSecret } = await import("./output.js");
    for (const s of ["true", "null", "demo", "abc", "1234567"]) expect(unsafeSecret(s), s).toMatch(/^it is \d+ characters? long/);
    for (const s of ["password", "changemenow", "12345678901", "Kennwörter", "contraseña"])
      expect(unsafeSecret(s), s).toMatch(/^it is a word or a number of \d+ characters alone/);
    for (const s of ["demo-secret", "alice-password", "ghs_0123456789abcdef", "passwordpassword"]) expect(unsafeSecret(s), s).toBeUndefined();
    const unsafe = unsafeSecrets({ REVSYNC_TOKEN: "x".repeat(40), GITHUB_TOKEN: "true" }, ["REVSYNC_TOKEN", "GITHUB_TOKEN"]);
    expect(unsafe.map((u) => u.name)).toEqual(["GITHUB_TOKEN"]);
    expect(unsafeSecretRefusal(unsafe[0] as (typeof unsafe)[number]).message).toMatch(
      /^GITHUB_TOKEN cannot be kept out of revsync's output: it is 4 characters long: .*; nothing was sent$/,
    );
  });
});
