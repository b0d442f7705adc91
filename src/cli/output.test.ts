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
