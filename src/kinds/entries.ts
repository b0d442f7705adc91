/** Plan and drift entries every kind makes the same way: an entry apply never acts on, what git holds
 *  and the service does not, fields that differ, what the service holds and git does not. */
import type { Change, DriftItem } from "../shared/entries.js";
import type { FieldDiff } from "../shared/normalize.js";
import { plural } from "../words.js";
import type { Who } from "../shared/who.js";

type Extra = Partial<Pick<Change, "before" | "after" | "diff" | "version_id" | "last_modified_on" | "modified_by" | "modified_on" | "source" | "diff_rows">>;

/** An entry apply never acts on: a difference the interface cannot write, a write revsync refuses, or
 *  something the service holds that git does not; always shown with the reason. */
export function shownEntry(action: "unsupported" | "blocked" | "not_in_git", address: string, reason: string, o: Extra = {}): Change {
  return { address, action, before: null, after: null, diff: [], version_id: null, last_modified_on: null, reason, ...o };
}

/** Who drifted, where nobody can be named (what the service does not hold). */
export const nobody: Who = { modified_by: null, modified_on: null };

/** Drift: in git, not in the service. */
export const missingItem = (addr: string, what = "in git"): DriftItem => ({
  address: addr,
  class: "missing",
  diff: [],
  message: `${what}, not in the service`,
  ...nobody,
});

/** Drift: fields that differ from git, `before` what git says, `after` what the service holds. */
export function changedItems(addr: string, diff: FieldDiff[], who: Who): DriftItem[] {
  if (!diff.length) return [];
  const message = `${plural(diff.length, "field")} ${diff.length === 1 ? "differs" : "differ"} from git: ${diff.map((x) => x.path).join(", ")}`;
  return [{ address: addr, class: "changed", diff, message, ...who }];
}

/** Drift: in the service, not in git. */
export const unmanagedItem = (addr: string, who: Who): DriftItem => ({
  address: addr,
  class: "unmanaged",
  diff: [],
  message: "in the service, not in git",
  ...who,
});
