/** revsync export's report: what was (or, dry, would be) written, what was left as it was and why, and
 *  the closing line, for one environment (src/export/run.ts) and for every one (run-all-envs.ts). */
import { join, relative } from "node:path";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import type { ExportFolder } from "../export/folder.js";
import type { ExportPlan } from "../export/in-place.js";
import type { Exported, WhatToWrite } from "../export/run.js";
import type { ExportedAll } from "../export/run-all-envs.js";
import { targeted } from "../shared/address.js";
import { unknownNotes } from "../shared/unknown.js";
import { plural } from "../words.js";
import type { Lines } from "./lines.js";

/** What the report says an export was asked for. */
interface Ctx {
  out: Lines;
  repo: Repo;
  env: ResolvedEnv;
  folder: Pick<ExportFolder, "shown">;
  targets: string[];
  dryRun: boolean;
}

/** One environment's export, said: the writes refused before any was made, what was written (or what
 *  was, before a write failed), what was left, and the closing line. */
export function exportText(x: Exported, asked: Omit<Ctx, "out">, out: Lines): void {
  const ctx = { ...asked, out };
  for (const e of x.errors) out.error(e);
  if (x.stopped) {
    // Every file written before the failure is reported, and plan shows what is left.
    reportWrites(ctx, { ...x.plan, vars: [] }, { ...x.w, writes: x.stopped.written }, []);
    out.error(
      `export stopped: ${x.stopped.error.message}; ${plural(x.stopped.written.length, "file was", "files were")} written (listed above): run export again, or plan to see what is left`,
    );
    return;
  }
  reportWrites(ctx, x.plan, x.w, x.schemas);
  reportLeft(ctx, x, new Set(x.w.writes.filter((f) => f.created).map((f) => f.what)));
  closing(ctx, x);
}

/** The lines of what was (or, with --dry-run, would be) written. */
function reportWrites(ctx: Ctx, plan: ExportPlan, w: WhatToWrite, schemas: string[]): void {
  const { out, repo, env } = ctx;
  const dry = ctx.dryRun;
  for (const x of w.writes)
    out.out(
      `${dry ? (x.created ? "would write" : "would update") : x.created ? "wrote" : "updated"} ${ctx.folder.shown(x.file)}${x.created && !x.what.startsWith("values") ? "" : ` (${x.what})`}`,
    );
  const envVars = repo.config.environments[env.name]?.vars ?? {};
  const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
  for (const v of plan.vars) {
    out.out(
      `${dry ? "would set" : "set"} environments.${env.name}.vars.${v.name} in ${configShown}: ${JSON.stringify(envVars[v.name])} -> ${JSON.stringify(v.value)} (${v.what} reads \${${v.name}}, which stays)`,
    );
  }
  for (const f of schemas)
    out.out(`${dry ? "would write" : "wrote"} ${relative(repo.cwd, join(repo.root, f)) || f} (the schemas the files' first line refers to)`);
}

/** What export left as it was, and why: files it could not update, differences another environment
 *  would see, what git cannot hold, what the service does not show, what git holds alone. */
function reportLeft(ctx: Ctx, x: Exported, created: Set<string>): void {
  const { out } = ctx;
  const { plan, files, unnamed } = x;
  for (const s of plan.skipped) out.error(s);
  for (const b of plan.broken) out.error(`${ctx.folder.shown(b.file)}:${b.message}`);
  for (const r of plan.refused) out.error(r.message);
  for (const r of x.heldTwice) out.error(r);
  for (const u of x.unreadable) out.error(`${u}: export neither updates it nor writes a policy file beside it that it may already hold`);
  // Left out of new files only: in a file git holds, a field the service does not show (or shows as a
  // number that is not comparable) keeps git's value.
  const keptInGit = (l: string): boolean => l.endsWith("(the service shows null)") || l.endsWith(", not comparable)");
  const leftOut = files.flatMap((f) => (created.has(f.address) ? f.leftOut : f.leftOut.filter((l) => !keptInGit(l))));
  if (unnamed.length)
    out.warn(`not exported, git cannot hold their names (plan shows each as not in git; rename it in the service to manage it):\n  ${unnamed.join("\n  ")}`);
  if (leftOut.length)
    out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
  for (const n of unknownNotes(plan.unknown)) out.out(`Note: ${n}`);
  const gitOnly = plan.gitOnly.filter((g) => targeted(g.address, ctx.targets));
  if (gitOnly.length) {
    out.warn(
      `git has files for what the service does not hold, left as they are (plan shows each):\n  ${gitOnly.map((g) => `${g.address} (${ctx.folder.shown(g.file)})`).join("\n  ")}`,
    );
  }
}

/** Why export left differences as they were, counted by reason: the words of its closing line. */
export function refusalWords(refused: ExportPlan["refused"]): string[] {
  const n = (because: string): number => refused.filter((r) => r.because === because).length;
  const words = [
    ["shared", "difference another environment would see", "differences other environments would see"],
    ["process", "value that comes from a process variable", "values that come from process variables"],
    ["variable", "value that comes from variables export cannot set", "values that come from variables export cannot set"],
  ] as const;
  return words.filter(([b]) => n(b) > 0).map(([b, one, many]) => plural(n(b), one, many));
}

/** The closing lines: what was written, or why nothing was, and what was left as it was for a problem. */
function closing(ctx: Ctx, x: Exported): void {
  const { out, repo } = ctx;
  const { plan, w, schemas, heldTwice, failed } = x;
  // A policy export could not compare (a file it cannot read with this environment's variables) is not
  // "already held": it is a failure, said, and never "Nothing to export".
  const newFiles = w.writes.filter((x) => x.created).length;
  const total = w.writes.length + schemas.length + (w.configText !== undefined ? 1 : 0);
  if (!total && !failed) {
    const unknown = [...plan.unknown.values()].flat().length;
    const caveat = unknown
      ? `, in every field the service shows (${plural(unknown, "field")} it does not show kept as git has ${unknown === 1 ? "it" : "them"})`
      : "";
    out.out(`Nothing to export: git's files already hold what the service holds${caveat}.`);
  } else if (!total) out.out("Nothing was exported: see the errors above.");
  if (ctx.dryRun && total) {
    const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
    const parts = `${newFiles} new, ${w.writes.length - newFiles} updated${schemas.length ? `, ${schemas.length} schemas` : ""}${w.configText !== undefined ? `, ${configShown}` : ""}`;
    out.out(`\nDry run: ${plural(total, "file")} would be written (${parts}); nothing was written.`);
  }
  if (!failed) return;
  const failures = [
    plan.broken.length ? plural(plan.broken.length, "file with a YAML error", "files with YAML errors") : "",
    plan.skipped.length ? plural(plan.skipped.length, "policy it could not compare", "policies it could not compare") : "",
    ...refusalWords(plan.refused),
    w.outside.length ? plural(w.outside.length, "file outside the folder", "files outside the folder") : "",
    w.unwritable.length ? plural(w.unwritable.length, "file that cannot be written", "files that cannot be written") : "",
    w.heldBack.length ? plural(w.heldBack.length, "file held back with them", "files held back with them") : "",
    heldTwice.length ? plural(heldTwice.length, "copy of a name the service holds twice", "copies of names the service holds twice") : "",
    x.unreadable.length ? plural(x.unreadable.length, "policy file it could not read", "policy files it could not read") : "",
  ].filter(Boolean);
  out.error(
    `export left ${failures.join(", ")} as ${failed === 1 ? "it was" : "they were"} (listed above)${total && !ctx.dryRun ? "; the rest was written" : ""}`,
  );
}

/** Every environment's export, said: the writes refused before any was made; what was (or would be)
 *  written, or what was before a write failed; what was left as it was, and the closing line. */
export function exportAllText(x: ExportedAll, asked: Pick<Ctx, "repo" | "folder" | "dryRun">, out: Lines): void {
  const { repo, folder } = asked;
  for (const e of x.errors) out.error(e);
  if (x.stopped) {
    for (const f of x.stopped.written) out.out(`${f.created ? "wrote" : "updated"} ${folder.shown(f.file)}`);
    out.error(
      `export stopped: ${x.stopped.error.message}; ${plural(x.stopped.written.length, "file was", "files were")} written (listed above): run export again`,
    );
    return;
  }
  const { w, schemas } = x;
  const dry = asked.dryRun;
  const written = w.writes.filter((f) => !x.refused.includes(f));
  for (const f of written)
    out.out(`${dry ? (f.created ? "would write" : "would update") : f.created ? "wrote" : "updated"} ${folder.shown(f.file)} (${f.what})`);
  const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
  for (const v of w.sets)
    out.out(`${dry ? "would set" : "set"} environments.${v.env}.vars.${v.name} in ${configShown}: ${JSON.stringify(v.value)} (${v.what})`);
  for (const f of schemas)
    out.out(`${dry ? "would write" : "wrote"} ${relative(repo.cwd, join(repo.root, f)) || f} (the schemas the files' first line refers to)`);
  const pr = x.problems;
  for (const p of pr.skipped) out.error(p);
  for (const b of pr.broken) out.error(b);
  for (const r of pr.refused) out.error(r.message);
  for (const f of pr.failed) out.error(f);
  if (pr.unnamed.length) out.warn(`not exported, git cannot hold their names (plan shows each as not in git):\n  ${pr.unnamed.join("\n  ")}`);
  if (pr.leftOut.length)
    out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${pr.leftOut.join("\n  ")}`);
  for (const n of unknownNotes(pr.unknown)) out.out(`Note: ${n}`);
  if (pr.gitOnly.length) out.warn(`git has files for what the service does not hold, left as they are (plan shows each):\n  ${pr.gitOnly.join("\n  ")}`);
  const count = x.failed;
  const total = written.length + schemas.length + (w.configText !== undefined ? 1 : 0);
  const envs = x.envs.join(", ");
  if (!total && !count) out.out(`Nothing to export: git's files already hold what the service of every environment (${envs}) holds.`);
  if (dry && total) out.out(`\nDry run: ${plural(total, "file")} would be written; nothing was written.`);
  if (!count) return;
  const why = [
    ...refusalWords(pr.refused),
    pr.skipped.length ? plural(pr.skipped.length, "policy it could not compare", "policies it could not compare") : "",
    pr.failed.length ? plural(pr.failed.length, "name held twice or file it could not read", "names held twice or files it could not read") : "",
  ];
  out.error(
    `export left ${[...why, x.refused.length ? plural(x.refused.length, "file that cannot be written", "files that cannot be written") : ""].filter(Boolean).join(", ") || "what is listed above"} as it was (listed above)${total && !dry ? "; the rest was written" : ""}`,
  );
}
