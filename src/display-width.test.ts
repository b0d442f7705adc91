import { describe, expect, it } from "vitest";
import { table } from "./report/table.js";
import { displayWidth, padDisplay } from "./display-width.js";

describe("display width", () => {
  it("counts terminal columns: CJK and emoji two, a combining mark none", () => {
    expect(displayWidth("Hardware SSP")).toBe(12);
    expect(displayWidth("硬件 SSP")).toBe(8);
    expect(displayWidth("🚀 Launch")).toBe(9);
    expect(displayWidth("👩‍💻")).toBe(2);
    expect(displayWidth("Cafe\u0301")).toBe(4);
    expect(padDisplay("硬件", 6)).toBe("硬件  ");
  });

  it("a table of such names lines its columns up on the screen", () => {
    const text = table([
      ["POLICY", "BATCH", "STATUS"],
      ["Hardware SSP", "FY26-H1", "approved"],
      ["硬件 SSP", "第一期", "reviewed"],
      ["🚀 Launch SSP", "FY26 🚀", "file uploaded"],
    ]);
    const lines = text.split("\n");
    // Every STATUS starts at the same terminal column as its heading.
    const at = (line: string, word: string): number => displayWidth(line.slice(0, line.indexOf(word)));
    const col = at(lines[0] ?? "", "STATUS");
    expect(at(lines[1] ?? "", "approved")).toBe(col);
    expect(at(lines[2] ?? "", "reviewed")).toBe(col);
    expect(at(lines[3] ?? "", "file uploaded")).toBe(col);
    expect(lines[2]).toBe("硬件 SSP       第一期   reviewed");
  });
});
