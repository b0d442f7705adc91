import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiCore } from "../src/api/core.js";
import { runWrite } from "../src/api/write.js";
import { checkPayloads, readyToApply, applyPlan } from "../src/apply/run.js";
import { loadPolicies, loadRepo, varsFor } from "../src/config/repo.js";
import { at } from "../src/config/schema-diagnostics.js";
import type { Diagnostic } from "../src/config/diagnostics.js";
import { shownEntry, changedItems, missingItem } from "../src/kinds/entries.js";
import { newFile, fitSpec } from "../src/kinds/export-file.js";
import type { Kind, Registry } from "../src/kinds/kind.js";
import { KINDS } from "../src/kinds/registry.js";
import { readLive } from "../src/live/read.js";
import { buildDrift } from "../src/plan/drift.js";
import { makePlan } from "../src/plan/make.js";
import { fieldDiff } from "../src/shared/normalize.js";
import { removeDir } from "../src/testing/helpers.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";

// A resource kind added through the registry alone: this file holds the whole kind (a greeting: a text a
// tenant shows, one PATCH to change it) and a stand-in of the service it lives in. Nothing of revsync
// names it; plan, apply and drift find it in the registry they are given. The stand-in is an HTTP server,
// as a kind speaks to its service through the one HTTP core (ApiCore): the core's sign-in, deadlines,
// answer checks and the write unit's guard and read-back all run for it as for the shipped kinds.

/** What the stand-in holds of one greeting. */
type Greeting = { name: string; text: string; version: number; changed_by: string };
/** git's greeting: its file's name and text. */
type GitGreeting = { name: string; text: string; source: { file: string; line: number; column: number } };

const GREETINGS = "/toy/greetings";
const LIST_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    required: ["name", "text", "version"],
    properties: { name: { type: "string" }, text: { type: "string" }, version: { type: "integer" }, changed_by: { type: "string" } },
  },
};
const FILE_SCHEMA = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "revsync/v1" },
    kind: { const: "Greeting" },
    metadata: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
    spec: { type: "object", required: ["text"], additionalProperties: false, properties: { text: { type: "string" } } },
  },
};

const addr = (name: string): string => `greeting/${name}`;
const list = (core: ApiCore): Promise<Greeting[]> => core.call({ method: "GET", path: GREETINGS, kind: "read", schema: LIST_SCHEMA });

/** The toy kind, whole: git, the service, plan, drift, the write, export and evidence. */
const greeting: Kind<GitGreeting, Greeting[]> = {
  name: "greeting",
  fileKind: "Greeting",
  schema: FILE_SCHEMA,
  entry: (d) => {
    const v = d.src.value as { metadata: { name: string }; spec: { text: string } };
    return { name: v.metadata.name, text: v.spec.text, source: { file: d.src.file, ...at(d.src, "/metadata/name") } };
  },
  addressesIn: (entries) => entries.map((g) => addr(g.name)),
  address: addr,
  addressForms: ["greeting/<name>"],

  read: async (core, _desired, _opts, progress) => {
    const got = await list(core);
    progress.done("greetings");
    return got;
  },
  addressesLive: (live) => live.map((g) => addr(g.name)),
  targeted: (desired, _live, on) => desired.filter((g) => on(addr(g.name))),

  plan: (desired, live) =>
    desired.flatMap((g) => {
      const held = live.find((x) => x.name === g.name);
      if (!held) return [shownEntry("unsupported", addr(g.name), "the stand-in cannot create a greeting", { after: { text: g.text } })];
      const diff = fieldDiff({ text: held.text }, { text: g.text });
      if (!diff.length) return [];
      return [
        {
          address: addr(g.name),
          action: "update" as const,
          before: { text: held.text },
          after: { text: g.text },
          diff,
          version_id: String(held.version),
          last_modified_on: null,
          source: `${g.source.file}:${g.source.line}`,
          payload: { kind: "greeting", name: g.name, text: g.text },
        },
      ];
    }),
  drift: (desired, live) =>
    desired.flatMap((g) => {
      const held = live.find((x) => x.name === g.name);
      if (!held) return [missingItem(addr(g.name))];
      return changedItems(addr(g.name), fieldDiff({ text: g.text }, { text: held.text }), { modified_by: held.changed_by, modified_on: null });
    }),
  unmanaged: (desired, live) =>
    live
      .filter((x) => !desired.some((g) => g.name === x.name))
      .map((x) => ({
        address: addr(x.name),
        class: "unmanaged" as const,
        reason: "the stand-in holds this greeting and git has no file for it",
        before: { text: x.text },
        version_id: String(x.version),
        last_modified_on: null,
        modified_by: x.changed_by,
        modified_on: null,
      })),

  payloadProblems: (c) => {
    const p = c.payload as { name?: unknown; text?: unknown } | undefined;
    return p?.name === c.address.slice("greeting/".length) && c.diff.every((d) => d.after === p?.text) ? [] : ["the payload is not the reviewed text"];
  },
  gitProblems: (c, desired) => {
    const g = desired.find((x) => addr(x.name) === c.address);
    const text = (c.payload as { text?: unknown } | undefined)?.text;
    return !g
      ? ["git no longer asks for it"]
      : text === g.text
        ? []
        : [`text: the plan writes ${JSON.stringify(text)}, git asks for ${JSON.stringify(g.text)}`];
  },
  apply: (run) => ({
    write: async (c, core) => {
      const p = c.payload as unknown as { name: string; text: string };
      const held = async (): Promise<Greeting | undefined> => (await list(core)).find((x) => x.name === p.name);
      const outcome = await runWrite<Greeting, { ifMatch: string }>(core, {
        guard: async () => {
          const now = await held();
          if (!now) return { blocked: `${c.address} is no longer in the stand-in` };
          if (now.text === p.text) return { already: "the stand-in holds git's text" };
          if (String(now.version) !== c.version_id) return { blocked: `${c.address} changed since the plan (by ${now.changed_by})` };
          run.log(`${c.address}: unchanged since the plan; sending the update`);
          return { go: { ifMatch: String(now.version) } };
        },
        request: (r) => ({
          method: "PATCH",
          path: `${GREETINGS}/${encodeURIComponent(p.name)}`,
          body: { text: p.text },
          bodySchema: { type: "object", required: ["text"], properties: { text: { type: "string" } }, additionalProperties: false },
          kind: "write",
          schema: LIST_SCHEMA.items,
          ifMatch: r.ifMatch,
        }),
        result: (body) => body as Greeting,
        readBack: async () => {
          const now = await held();
          return now?.text === p.text ? { landed: true, result: now } : { landed: false };
        },
      });
      return { outcome };
    },
  }),

  export(live, ctx) {
    return live.map((x) => {
      const f = newFile(ctx.unique(`${x.name}.yaml`), addr(x.name), FILE_SCHEMA, "Greeting", x.name);
      fitSpec(f, { text: x.text }, ["text"], false);
      return f;
    });
  },
  evidence: () => async (c) => ({ address: c.address, action: c.action, holds: true, differs: [], modified_by: null, modified_on: null }),
};

/** The stand-in: the greetings, each PATCH checked against its If-Match; the shipped kinds' lists empty. */
function standIn(greetings: Greeting[], requests: string[]): Server {
  const reply = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d));
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      const url = req.url ?? "";
      if (req.method === "GET" && url === GREETINGS) return reply(res, 200, greetings);
      if (req.method === "GET" && url.startsWith("/apis/policy-sets/v1/policy/")) return reply(res, 200, []);
      const g = req.method === "PATCH" ? greetings.find((x) => `${GREETINGS}/${encodeURIComponent(x.name)}` === url) : undefined;
      if (!g) return reply(res, 404, { message: "no such greeting" });
      if (req.headers["if-match"] !== String(g.version)) return reply(res, 412, { message: "stale version" });
      Object.assign(g, { text: (JSON.parse(text) as { text: string }).text, version: g.version + 1, changed_by: "revsync" });
      return reply(res, 200, g);
    });
  });
}

describe("a toy kind added through the registry alone: planned, applied and drifted against a stand-in service", () => {
  const greetings: Greeting[] = [
    { name: "welcome", text: "Hello", version: 1, changed_by: "alice" },
    { name: "farewell", text: "Bye", version: 3, changed_by: "bob" },
    { name: "legacy", text: "Howdy", version: 7, changed_by: "carol" },
  ];
  const requests: string[] = [];
  const server = standIn(greetings, requests);
  const registry: Registry = [...KINDS, greeting];
  let root = "";
  let core: ApiCore;

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    root = mkdtempSync(join(tmpdir(), "revsync-toy-"));
    writeFileSync(join(root, "revsync.yaml"), `version: 1\npolicies: policies\nenvironments:\n  toy:\n    base_url: ${url}\n    realm: toy\n`);
    mkdirSync(join(root, "policies"));
    const file = (name: string, text: string): string =>
      `apiVersion: revsync/v1\nkind: Greeting\nmetadata: { name: ${name} }\nspec: { text: ${JSON.stringify(text)} }\n`;
    writeFileSync(join(root, "policies", "greetings.yaml"), `${file("welcome", "Hello, world")}---\n${file("farewell", "Bye")}`);
    core = new ApiCore({ baseUrl: url, authUrl: url, realm: "toy", credentials: { kind: "token", token: "t", user: "alice" } });
  });
  afterAll(async () => {
    await core.close();
    server.close();
    removeDir(root);
  });

  const desired = () => {
    const diagnostics: Diagnostic[] = [];
    const repo = loadRepo(join(root, "revsync.yaml"), diagnostics, root);
    if (!repo) throw new Error(diagnostics.map((d) => d.message).join("; "));
    const loaded = loadPolicies(repo, varsFor({ vars: {} }, {}), registry);
    expect(loaded.diagnostics).toEqual([]);
    return loaded.desired;
  };
  const meta = { environment: "toy", baseUrl: "", authUrl: "", realm: "toy", user: "alice", targets: [] };

  it("plan shows its update and what git does not hold, apply makes the write through the write unit, and drift is then what git does not hold", async () => {
    const plan = await makePlan(core, { desired: desired(), meta, concurrency: 2, kinds: registry });
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual(["update greeting/welcome", "not_in_git greeting/legacy"]);
    expect(plan.changes[0]?.diff).toEqual([{ path: "text", kind: "changed", before: "Hello", after: "Hello, world" }]);

    const checked = readyToApply(checkPayloads(plan, registry), core, { fourEyes: false, kinds: registry });
    const report = await applyPlan(core, checked, { concurrency: 2, isStopping: () => false, kinds: registry });
    expect(report.outcomes.map((o) => [o.address, o.outcome, o.message])).toEqual([["greeting/welcome", "done", "updated"]]);
    // Guarded: read, then the one PATCH, with the version the plan saw.
    expect(requests.filter((r) => r.startsWith("PATCH"))).toEqual(["PATCH /toy/greetings/welcome"]);
    expect(greetings[0]).toMatchObject({ text: "Hello, world", version: 2 });

    const live = await readLive(core, desired(), { concurrency: 2, targets: [] }, registry);
    const drift = buildDrift(desired(), live, { environment: "toy", targets: [] }, registry);
    expect(drift.drift.map((d) => `${d.class} ${d.address}`)).toEqual(["unmanaged greeting/legacy"]);
    expect((await makePlan(core, { desired: desired(), meta, concurrency: 2, kinds: registry })).changes.filter((c) => c.action === "update")).toEqual([]);
  });

  it("a change made since the plan blocks its write, and drift names who made it", async () => {
    writeFileSync(join(root, "policies", "greetings.yaml"), `apiVersion: revsync/v1\nkind: Greeting\nmetadata: { name: farewell }\nspec: { text: See you }\n`);
    const plan = await makePlan(core, { desired: desired(), meta, concurrency: 2, kinds: registry });
    Object.assign(greetings[1] as Greeting, { text: "Farewell", version: 4, changed_by: "dave" });
    const report = await applyPlan(core, readyToApply(checkPayloads(plan, registry), core, { fourEyes: false, kinds: registry }), {
      concurrency: 2,
      isStopping: () => false,
      kinds: registry,
    });
    expect(report.outcomes.map((o) => [o.address, o.outcome])).toEqual([["greeting/farewell", "blocked"]]);
    expect(report.outcomes[0]?.message).toMatch(/greeting\/farewell changed since the plan \(by dave\)/);
    const live = await readLive(core, desired(), { concurrency: 2, targets: [] }, registry);
    const changed = buildDrift(desired(), live, { environment: "toy", targets: [] }, registry).drift.find((d) => d.class === "changed");
    expect(changed).toMatchObject({ address: "greeting/farewell", modified_by: "dave", diff: [{ path: "text", before: "See you", after: "Farewell" }] });
  });

  it("the shipped kinds alone know nothing of it: its files are of no kind they read", () => {
    const diagnostics: Diagnostic[] = [];
    const repo = loadRepo(join(root, "revsync.yaml"), diagnostics, root);
    if (!repo) throw new Error("no repo");
    const loaded = loadPolicies(repo, varsFor({ vars: {} }, {}), KINDS);
    expect(loaded.diagnostics.map((d) => d.message)).toEqual(['kind: expected "TenantConfiguration" or "SspPolicy", got "Greeting"']);
  });
});
