import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { UserError } from "./errors.js";
import { writeFileAtomic } from "./fs-atomic.js";

const REASONS: Record<string, string> = {
  EISDIR: "it is a folder",
  ENOTDIR: "a part of the path is a file, not a folder",
  // mkdir of a parent folder that exists as a file
  EEXIST: "a part of the path is a file, not a folder",
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exhausted",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "it is a symbolic link that leads round in a loop (to itself, or through others back to itself)",
};

/** Why a file operation failed, in plain words. */
export function plainReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? "";
  return REASONS[code] ?? (e as Error).message;
}

/** A failure to read or write a user's file, in plain words naming the path (exit 1). */
export function fileError(action: "read" | "write", path: string, e: unknown): UserError {
  return new UserError(`cannot ${action} ${path}: ${plainReason(e)}`);
}

/** A path's real place, every symbolic link on the way followed, for a path that may not exist yet: the
 *  real place of its nearest existing parent, with the rest; a dangling link leads to where its target
 *  would be. */
function realOf(path: string, hops = 0): string {
  if (hops > 40) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
  try {
    return realpathSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  let link = false;
  try {
    link = lstatSync(path).isSymbolicLink();
  } catch {
    // Not there at all: its parent says where it would be.
  }
  if (link) return realOf(resolve(dirname(path), readlinkSync(path)), hops + 1);
  const parent = dirname(path);
  return parent === path ? path : join(realOf(parent, hops + 1), basename(path));
}

const within = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** How a write names paths in its messages: `show` turns a path into words (relative to the working
 *  directory, say), `folderName` names the folder a file belongs to ("the policy repo"). */
export interface PathWords {
  show?: (path: string) => string;
  folderName?: string;
}

/** The one rule for where revsync writes a file (docs/decisions.md, "Files stay in their folder"):
 *  `path` is written only where it really lies inside `folder`, with every symbolic link on the way
 *  followed. A link that stays inside is written through (its target changes, the link stays a link);
 *  one that leads out of the folder is refused, named, and nothing is written through it; a path that
 *  leads out without a link (`..`) is refused too. Returns the real path to write to. */
export function realPathInside(folder: string, path: string, words: PathWords = {}): string {
  const show = words.show ?? ((p: string) => p);
  const top = resolve(folder);
  const abs = resolve(path);
  const name = words.folderName ?? show(top);
  let root: string;
  let real: string;
  try {
    root = realOf(top);
    real = realOf(abs);
  } catch (e) {
    throw fileError("write", show(abs), e);
  }
  if (within(root, real)) return real;
  const rel = relative(top, abs);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new UserError(`${show(abs)} lies outside ${name}: not written`);
  let at = top;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    let link = false;
    try {
      link = lstatSync(at).isSymbolicLink();
    } catch {
      break;
    }
    const target = link ? realOf(at) : undefined;
    if (target !== undefined && !within(root, target)) {
      throw new UserError(
        `${show(at)} is a symbolic link to ${target}, outside ${name}: nothing is written through it${at === abs ? "" : ` (${show(abs)} not written)`}`,
        "point the link inside the folder, or put the file or folder itself in its place",
      );
    }
  }
  throw new UserError(`${show(abs)} lies outside ${name}: not written`);
}

/** Writes a file a user named (--out, --output, init): missing parent folders are created; a crash
 *  leaves the old or the new content; a failure is a plain error naming the path. `folder`: the folder
 *  it belongs to (realPathInside), by default the one it is named in. */
export function writeUserFile(path: string, data: string | Uint8Array, folder = dirname(path), words: PathWords = {}): void {
  const target = realPathInside(folder, path, words);
  try {
    writeFileAtomic(target, data);
  } catch (e) {
    throw fileError("write", words.show ? words.show(path) : path, e);
  }
}

/** Edits a file as an editor does (export): through a symbolic link that stays inside `folder` (its
 *  target changes, the link stays a link), keeping the file's mode; a new file is written as
 *  writeUserFile writes one. */
export function editUserFile(path: string, data: string | Uint8Array, folder: string, words: PathWords = {}): void {
  const target = realPathInside(folder, path, words);
  let mode: number | undefined;
  try {
    mode = statSync(target).mode & 0o7777;
  } catch {
    // A new file (or a dangling link inside the folder, whose target it becomes).
  }
  try {
    if (mode === undefined) writeFileAtomic(target, data);
    else writeFileAtomic(target, data, mode, true);
  } catch (e) {
    throw fileError("write", words.show ? words.show(path) : path, e);
  }
}
