import { describe, expect, it } from "vitest";
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
});
