/** An SSP policy's batches over the environments that hold it (export --all-envs): a batch only some
 *  hold is scoped to them (its environments), its status and dates a ${VAR} where they differ, its values
 *  one file where they agree, else one per environment read through a ${VAR}; in a file git holds, the
 *  batches git lists brought to that, and those it does not list added. */
import { posix } from "node:path";
import { sameJson } from "../../canonical-json.js";
import { variablesIn } from "../../config/interpolate.js";
import { slug, valuesFileFor } from "../../shared/address.js";
import { BATCH_DATES, type EnvsDocInGit, type EnvsMerge, type ExportedBatch, type Holding, type VarRef } from "../export-file.js";
import { sameValues } from "./export-in-git.js";

/** A batch over the environments: a VarRef where their values differ. */
interface MergedBatch {
  name: string;
  status: string | VarRef;
  values?: string | VarRef;
  effective_start_date?: string | VarRef;
  effective_end_date?: string | VarRef;
  environments?: string[];
}

type ValuesFile = { file: string; text: string };

const batchNames = (holdings: readonly Holding[]): string[] => [...new Set(holdings.flatMap((h) => (h.file.value.batches ?? []).map((b) => b.name)))].sort();
const holdsBatch = (h: Holding, name: string): boolean => !!h.file.value.batches?.some((b) => b.name === name);
const batchOf = (h: Holding, name: string): ExportedBatch | undefined => h.file.value.batches?.find((b) => b.name === name);
const addressOf = (held: readonly Holding[], name: string, policy: string): string => held[0]?.file.batchAddress?.(name) ?? `${policy}/${name}`;
/** What a literal of a file means (`$${` is a `${`). */
const meaning = (v: unknown): unknown => (typeof v === "string" ? v.replaceAll("$${", "${") : v);

/** The values of one batch over its holders: one file where they agree, else one per environment,
 *  named through a ${VAR}. The files are relative to the policy file. */
function mergedValues(m: EnvsMerge, held: readonly Holding[], policy: string, name: string, what: string): { values?: string | VarRef; files: ValuesFile[] } {
  const texts = held.map((h) => h.file.batchValues.get(name));
  if (!texts.every((t): t is string => t !== undefined)) return { files: [] };
  const dir = posix.dirname(m.file);
  const own = (suffix: string): string => posix.relative(dir, m.unique(posix.join(dir, valuesFileFor(policy, name).replace(/\.csv$/, `${suffix}.csv`))));
  if (texts.every((t) => t === texts[0] || sameValues(t, texts[0] as string))) {
    const file = own("");
    return { values: file, files: [{ file, text: texts[0] as string }] };
  }
  const files = held.map((h, i) => ({ env: h.env, file: own(`-${slug(h.env)}`), text: texts[i] as string }));
  const values = m.name([policy, name, "values"], new Map(files.map((f) => [f.env, f.file])), `${what}: values`);
  return { values, files: files.map(({ file, text }) => ({ file, text })) };
}

/** One batch over the holdings of a policy: scoped to those that hold it, its status and dates merged,
 *  its values merged. */
function mergedBatch(m: EnvsMerge, holdings: readonly Holding[], name: string): { entry: MergedBatch; valuesFiles: ValuesFile[] } {
  const held = holdings.filter((h) => holdsBatch(h, name));
  const policy = held[0]?.file.value.metadata.name ?? "";
  const what = held[0]?.file.batchAddress?.(name) ?? `${held[0]?.file.address ?? policy}`;
  const of = (h: Holding): ExportedBatch => batchOf(h, name) as ExportedBatch;
  const statuses = held.map((h) => of(h).status);
  const entry: MergedBatch = { name, status: m.merged("status", held, statuses, [policy, name, "status"], `${what}: status`) as string };
  for (const k of BATCH_DATES) {
    const dates = held.map((h) => of(h)[k]);
    if (dates.every((d) => d !== undefined)) entry[k] = m.merged(k, held, dates, [policy, name, k], `${what}: ${k}`) as string;
  }
  const { values, files } = mergedValues(m, held, policy, name, what);
  if (values !== undefined) entry.values = values;
  if (held.length < holdings.length) entry.environments = held.map((h) => h.env);
  return { entry, valuesFiles: files };
}

/** The batches of a merged document (a file git does not hold), and their values files. */
export function mergeBatches(holdings: readonly Holding[], m: EnvsMerge): { value: Record<string, unknown>; valuesFiles: ValuesFile[] } {
  const valuesFiles: ValuesFile[] = [];
  const batches = batchNames(holdings).map((b) => {
    const merged = mergedBatch(m, holdings, b);
    valuesFiles.push(...merged.valuesFiles);
    return merged.entry;
  });
  return { value: batches.length ? { batches } : {}, valuesFiles };
}

/** A batch git lists once: scoped to the holders of the policy that hold it (and the environments the
 *  document is for that hold no policy yet), its status, dates and values ${VAR}s where they differ. */
function prepareListed(d: EnvsDocInGit, i: number, b: string): void {
  const policy = d.holders[0]?.file.value.metadata.name ?? "";
  const held = d.holders.filter((h) => holdsBatch(h, b));
  const was = d.scopeAt(["batches", i]) ?? d.scope;
  const holderEnvs = new Set(d.holders.map((h) => h.env));
  const inOrder = (envs: string[]): string[] => d.order.filter((e) => envs.includes(e));
  const now = inOrder([...was.filter((e) => !holderEnvs.has(e)), ...held.map((h) => h.env)]);
  const address = addressOf(held, b, policy);
  if (!sameJson(now, inOrder(was)) && now.length) {
    d.setScope(["batches", i], now, d.scope);
    d.note(`${address}: environments ${now.join(", ")} (those that hold it)`);
  }
  const rest = now.filter((e) => !held.some((h) => h.env === e));
  for (const k of ["status", ...BATCH_DATES] as const) {
    const values = new Map(held.flatMap((h) => (batchOf(h, b)?.[k] === undefined ? [] : [[h.env, batchOf(h, b)?.[k]] as const])));
    if (values.size !== held.length || d.get(["batches", i, k]) === undefined) continue;
    if (d.varFor(["batches", i, k], values, rest, [policy, b, k], `${address}: ${k}`) === "var") d.note(`${address}: ${k} now a \${VAR}`);
  }
  prepareValues(d, i, b, held, rest);
}

/** Values that differ between the holders of a batch git lists with one values file: one file each,
 *  named through a ${VAR}; git's file stays for the environments that hold no such batch yet. */
function prepareValues(d: EnvsDocInGit, i: number, b: string, held: Holding[], rest: string[]): void {
  const raw = d.get(["batches", i, "values"]);
  const texts = held.map((h) => h.file.batchValues.get(b));
  if (typeof raw !== "string" || variablesIn(raw).length || !texts.every((t): t is string => t !== undefined)) return;
  if (texts.every((t) => t === texts[0] || sameValues(t, texts[0] as string))) return;
  const dir = posix.dirname(d.file);
  const policy = held[0]?.file.value.metadata.name ?? "";
  const address = held[0]?.file.batchAddress?.(b) ?? b;
  const files = held.map((h, i2) => {
    const file = d.merge.unique(posix.join(dir, meaning(raw) as string).replace(/\.csv$/i, "") + `-${h.env.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.csv`);
    d.writeValues(file, texts[i2] as string, `values of ${address} in ${h.env}`);
    return [h.env, posix.relative(dir, file)] as const;
  });
  const values = new Map<string, string>([...files, ...rest.map((e) => [e, meaning(raw) as string] as const)]);
  const ref = d.merge.name([policy, b, "values"], values, `${address}: values`);
  d.setOwn(["batches", i, "values"], `\${${ref.name}}`);
  d.note(`batch ${b}: values differ between ${held.map((h) => h.env).join(", ")}: one file each, through \${${ref.name}}`);
}

/** A batch git does not list, added as every environment that holds it has it. */
function addMerged(d: EnvsDocInGit, b: string): void {
  const { entry, valuesFiles } = mergedBatch(d.merge, d.holders, b);
  const held = d.holders.filter((h) => holdsBatch(h, b)).map((h) => h.env);
  if (sameJson(held, d.scope)) delete entry.environments;
  else entry.environments = held;
  d.append("batches", { ...entry });
  const dir = posix.dirname(d.file);
  for (const v of valuesFiles) d.writeValues(posix.join(dir, v.file), v.text, `values of batch ${b}`);
  d.note(`batch ${b} added${entry.environments ? ` for ${entry.environments.join(", ")}` : ""}`);
}

/** The batches of git's document over the environments that read it for the policy. */
export function prepareBatches(d: EnvsDocInGit): void {
  const listed = d.get(["batches"]);
  const names = Array.isArray(listed) ? listed.map((item: unknown) => (item && typeof item === "object" ? (item as { name?: unknown }).name : undefined)) : [];
  for (const b of batchNames(d.holders)) {
    const at = names.flatMap((n, i) => (n === b ? [i] : []));
    if (!at.length) addMerged(d, b);
    else if (at.length === 1) prepareListed(d, at[0] as number, b);
  }
}
