// The layer order of src/, checked in npm test (npm run layers). docs/architecture.md says what each
// folder owns, in this order.
//
// Bottom to top. A module may import its own folder and any folder of a lower layer; folders that share
// a layer never import each other; nothing imports against the order, and no import makes a cycle.
// "root" is the small utilities at src/*.ts; "entry" is bin.ts and the loader of the bundled CLI.
export const LAYERS = [
  ["root"],
  ["schema"],
  ["shared", "ssp", "repo"],
  ["api", "emulator", "policy-test", "lock"],
  ["config"],
  ["kinds"],
  ["live"],
  ["guardrails"],
  ["promotion"],
  ["plan"],
  ["export"],
  ["apply"],
  ["evidence"],
  ["fleet"],
  ["report"],
  ["session"],
  ["cli"],
  ["entry"],
];

const ENTRY = "^src/(bin|load-cli)[.]ts$";
const pathOf = (folder) => (folder === "root" ? "^src/[^/]+[.]ts$" : folder === "entry" ? ENTRY : `^src/${folder}/`);
// Unit tests sit beside the code and may use the test helpers (src/testing/), which use every layer:
// neither is part of the order, and no module of the order may import them.
const TESTS = ["[.]test[.]ts$", "^src/testing/"];

const layerRules = LAYERS.flatMap((layer, i) =>
  layer.flatMap((folder) => {
    const above = LAYERS.slice(i + 1).flat();
    const siblings = layer.filter((f) => f !== folder);
    const below = LAYERS.slice(0, i).flat();
    if (!siblings.length && !above.length) return [];
    return {
      name: `layer-${folder}`,
      severity: "error",
      comment: `src/${folder === "root" ? "*.ts" : folder === "entry" ? "bin.ts" : folder} may import only itself${below.length ? ` and ${below.join(", ")}` : ""}: ${[...siblings, ...above].join(", ")} are not below it in the layer order (.dependency-cruiser.mjs, docs/architecture.md)`,
      from: { path: pathOf(folder), pathNot: [...TESTS, ...(folder === "root" ? [ENTRY] : [])] },
      to: { path: [...siblings, ...above].map(pathOf) },
    };
  }),
);

export default {
  forbidden: [
    ...layerRules,
    {
      name: "no-circular",
      severity: "error",
      comment: "an import cycle: two modules that need each other are one module, or a shared part belongs lower",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-test-code-in-the-product",
      severity: "error",
      comment: "the product never imports tests or the test helpers",
      from: { pathNot: TESTS },
      to: { path: TESTS },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "an import that resolves to no file",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a cycle through types is still two modules that need each other.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
    exclude: { path: "^src/schema/generated/" },
    // Like the type check, lint and format check: a warm tree is checked from a cache by content.
    cache: { folder: ".revsync-tmp/depcruise-cache", strategy: "content" },
  },
};
