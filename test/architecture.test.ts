import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT } from "../src/testing/helpers.js";

// docs/architecture.md matches the order npm run layers enforces (.dependency-cruiser.mjs): every
// folder of src/ is in the order, and the page lists them in it.

const load = async (): Promise<string[][]> => ((await import(pathToFileURL(join(ROOT, ".dependency-cruiser.mjs")).href)) as { LAYERS: string[][] }).LAYERS;

/** How the page names a layer's folder. */
const named = (folder: string): string => (folder === "root" ? "src/*.ts" : folder === "entry" ? "src/bin.ts" : `src/${folder}/`);

describe("the architecture page and the layer check agree", () => {
  it("every folder of src/ has a place in the order (the test helpers stand outside it)", async () => {
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const ordered = (await load()).flat().filter((f) => f !== "root" && f !== "entry");
    expect([...ordered, "testing"].sort()).toEqual(folders);
  });

  it("docs/architecture.md lists every layer's folders bottom to top, in the order the check enforces", async () => {
    const page = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const list = page.slice(page.indexOf("## The layers, bottom to top"), page.indexOf("Outside the order"));
    const listed = [...list.matchAll(/`(src\/(?:\*\.ts|bin\.ts|[a-z-]+\/))`/g)].map((m) => m[1]);
    expect(listed).toEqual((await load()).flat().map(named));
  });
});
