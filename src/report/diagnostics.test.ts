import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../config/diagnostics.js";
import { pickView } from "./view.js";
import { validateViews } from "./views/validate.js";

async function printed(list: Diagnostic[], files: number): Promise<string> {
  let text = "";
  const sink = {
    out: (t: string) => (text += `${t}\n`),
    raw: (t: string) => (text += t),
    json: () => undefined,
    info: () => undefined,
    paint: (_c: string, t: string) => t,
  };
  (await pickView(validateViews, "text"))({ diagnostics: list, files, env: {} }, sink);
  return text;
}

const at = (file: string, severity: "error" | "warning"): Diagnostic => ({ file, line: 1, column: 1, message: "m", severity });

describe("validate's closing line", () => {
  it("counts errors, the files that have one (not those with only a warning), and warnings, in correct plurals", async () => {
    expect(await printed([at("a.yaml", "error"), at("b.yaml", "warning")], 2)).toMatch(/\n1 error in 1 file, and 1 warning\.\n$/);
    expect(await printed([at("a.yaml", "error"), at("a.yaml", "error"), at("b.yaml", "error")], 2)).toMatch(/\n3 errors in 2 files\.\n$/);
    expect(await printed([], 1)).toBe("Valid: 1 policy document, no problems.\n");
    expect(await printed([], 0)).toBe("Valid: 0 policy documents, no problems.\n");
    expect(await printed([at("b.yaml", "warning"), at("b.yaml", "warning")], 3)).toMatch(/\nValid: 3 policy documents, 2 warnings\.\n$/);
  });
});
