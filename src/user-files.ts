import { realpathSync, statSync } from "node:fs";
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

/** Writes a file a user named (--out, --output, export): missing parent folders are created; a crash
 *  leaves the old or the new content; a failure is a plain error naming the path. */
export function writeUserFile(path: string, data: string | Uint8Array): void {
  try {
    writeFileAtomic(path, data);
  } catch (e) {
    throw fileError("write", path, e);
  }
}

/** Edits a file as an editor does (export): through a symbolic link (its target changes, the link
 *  stays a link), keeping the file's mode; a new file is written as writeUserFile writes one. */
export function editUserFile(path: string, data: string | Uint8Array): void {
  let target = path;
  let mode: number | undefined;
  try {
    target = realpathSync(path);
    mode = statSync(target).mode & 0o7777;
  } catch {
    // A new file (or a dangling link, which the write replaces): written as a new file.
  }
  try {
    if (mode === undefined) writeFileAtomic(target, data);
    else writeFileAtomic(target, data, mode, true);
  } catch (e) {
    throw fileError("write", path, e);
  }
}
