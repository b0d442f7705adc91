import { describe, expect, it } from "vitest";
import type { Registry } from "../kinds/kind.js";
import { lookAlikes, lookAlikeWords } from "./look-alike.js";

// A stand-in kind whose git entries and live state are lists of names: what lookAlikes compares.
const kind = {
  name: "k",
  addressesIn: (names: readonly string[]) => names.map((n) => `k/${n}`),
  addressesLive: (names: readonly string[]) => names.map((n) => `k/${n}`),
} as unknown as Registry[number];
const pairs = (git: string[], live: string[], targets: string[] = []) =>
  lookAlikes(new Map([["k", git]]), new Map([["k", live]]), targets, [kind]).map((l) => [l.git, l.service]);

describe("names of git and of the service that look alike", () => {
  it("case, spaces, an invisible character, NFD against NFC, a full-width or a Cyrillic letter: each named with git's", () => {
    for (const live of ["hardware ssp", "Hardware SSP ", "Hardware\u200b SSP", "Hаrdware SSP", "Ｈardware SSP"])
      expect(pairs(["Hardware SSP"], [live]), JSON.stringify(live)).toEqual([["k/Hardware SSP", `k/${live}`]]);
    expect(pairs(["Café"], ["Cafe\u0301"])).toEqual([["k/Café", "k/Cafe\u0301"]]);
  });

  it("the same name, or two names that differ as words do, are no pair; a name both hold is not compared", () => {
    expect(pairs(["Hardware SSP"], ["Hardware SSP"])).toEqual([]);
    expect(pairs(["Hardware SSP"], ["Software SSP"])).toEqual([]);
    expect(pairs(["A", "a"], ["a"])).toEqual([]);
  });

  it("within the targets; the words show what cannot be seen", () => {
    expect(pairs(["Hardware SSP"], ["hardware ssp"], ["k/Other"])).toEqual([]);
    expect(lookAlikeWords({ git: "k/A", service: "k/A\u200b " })).toMatch(/^"k\/A" in git and "k\/A\\u200b " in the service look alike/);
  });
});
