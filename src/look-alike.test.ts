import { describe, expect, it } from "vitest";
import { looksAlike, visibleName } from "./look-alike.js";

describe("names that look alike", () => {
  it("a character nobody sees is no difference, whatever its category, and the warning writes it as an escape", () => {
    // Variation selector, Hangul fillers, combining grapheme joiner (Default_Ignorable_Code_Point, letters
    // or marks rather than format characters), the blank Braille cell, a zero-width space.
    for (const c of ["\ufe0f", "\u3164", "\u115f", "\uffa0", "\u034f", "\u2800", "\u200b"]) {
      const name = `Hardware${c} SSP`;
      expect(looksAlike("Hardware SSP", name), JSON.stringify(name)).toBe(true);
      expect(visibleName(name)).toBe(`"Hardware\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")} SSP"`);
    }
    expect(looksAlike("Hardware SSP", "Software SSP")).toBe(false);
  });
});
