import { build, type Plugin } from "esbuild";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
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

describe("what every command line reads", () => {
  // Registering the commands reads each report's views (their formats are --format's choices), and
  // nothing those views render with: a view loads its renderers when a command picks it
  // (src/report/view.ts). So validate never starts string-width's segmenter, nor the plan's reports.
  it("the commands' registration reaches the views' tables and flags, never a renderer or a parser", async () => {
    // What loads only when it runs (import()) is not followed.
    const lazy: Plugin = {
      name: "lazy",
      setup: (b) => b.onResolve({ filter: /./ }, (a) => (a.kind === "dynamic-import" ? { path: a.path, external: true } : undefined)),
    };
    const { metafile } = await build({
      absWorkingDir: ROOT,
      entryPoints: ["src/cli/commands.ts"],
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
      packages: "external",
      plugins: [lazy],
    });
    const read = Object.keys(metafile.inputs).sort();
    const allowed = /^src\/(cli\/commands|cli\/flags|errors|report\/view|report\/views\/[a-z-]+)\.ts$/;
    expect(read.filter((f) => !allowed.test(f))).toEqual([]);
    expect(read).toContain("src/report/views/plan.ts");
    const packages = Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.kind !== "dynamic-import").map((i) => i.path));
    expect([...new Set(packages)]).toEqual(["commander"]);
  });
});

// What knows the tenant configuration. A source file names it when its text, comments included, matches
// /tenant.?config/i: an identifier (tenantConfigs), an address or a kind (tenant-configuration/,
// TenantConfiguration), a sentence of the product's own or a comment. Not counted: the kind's own module
// (src/kinds/tenant-configuration/), the emulator (a service that holds tenant configurations), the
// generated types, the tests and the test helpers. Everything else reaches the kind through the
// registry (src/kinds/registry.ts), which is one of the files that name it.
describe("the tenant configuration is known to its kind module", () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return sources(p);
      return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [p] : [];
    });
  const outside = (file: string): boolean => !/^src\/(testing|emulator|schema\/generated|kinds\/tenant-configuration)\//.test(file);

  it("at most 5 source files outside its kind module, the emulator and the generated types name it", () => {
    const naming = sources(join(ROOT, "src"))
      .map((f) => relative(ROOT, f).split(sep).join("/"))
      .filter(outside)
      .filter((f) => /tenant.?config/i.test(readFileSync(join(ROOT, f), "utf8")));
    expect(naming.length, `the files that name the tenant configuration: ${naming.join(", ")}`).toBeLessThanOrEqual(5);
    // The registry is how everything else reaches it.
    expect(naming).toContain("src/kinds/registry.ts");
  });
});
