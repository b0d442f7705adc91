import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync, type Stats } from "node:fs";
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
  return new UserError(`cannot ${action} ${path}: ${e instanceof FileRefused ? e.why : plainReason(e)}`);
}

/** A path's real place, every symbolic link on the way followed, for a path that may not exist yet: the
 *  real place of its nearest existing parent, with the rest; a dangling link leads to where its target
 *  would be. */
function realOf(path: string, hops = 0): string {
  if (hops > 40) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
  try {
    // The system's realpath, one call: Node's own walks and lstats every part of the path in JavaScript,
    // at twice the cost, for each file a command reads (a policy repo's dozens, each environment's).
    return realpathSync.native(path);
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
  return pathInside(folder, path, words, "write");
}

/** The reading counterpart of realPathInside: a file a repo holds (a policy file, a policy test file)
 *  is read only where it really lies inside `folder`, links followed; a link that leads out of it is
 *  refused, named, and nothing is read through it. Returns the real path to read. */
export function realPathInsideToRead(folder: string, path: string, words: PathWords = {}): string {
  return pathInside(folder, path, words, "read");
}

/** A path that leads out of the folder it belongs to (a link, or `..`): refused, nothing read or written. */
export class PathOutside extends UserError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = "PathOutside";
  }
}

/** The most a file name holds (NAME_MAX) and a path (PATH_MAX, less its NUL), in bytes, on the systems
 *  revsync runs on: a longer one fails only once it is written, so a write is checked for it first. */
const NAME_MAX = 255;
const PATH_MAX = 4095;

/** Why a path cannot be written by its length, if it cannot. */
function tooLong(abs: string): string | undefined {
  const long = abs.split(sep).find((part) => Buffer.byteLength(part) > NAME_MAX);
  if (long !== undefined)
    return `the name ${JSON.stringify(`${long.slice(0, 40)}…`)} is ${Buffer.byteLength(long)} bytes, over the ${NAME_MAX} a file name may have`;
  if (Buffer.byteLength(abs) > PATH_MAX) return `the path is ${Buffer.byteLength(abs)} bytes, over the ${PATH_MAX} a path may have`;
  return undefined;
}

function pathInside(folder: string, path: string, words: PathWords, action: "read" | "write"): string {
  const show = words.show ?? ((p: string) => p);
  const not = action === "write" ? "not written" : "not read";
  const long = action === "write" ? tooLong(resolve(path)) : undefined;
  if (long) throw new UserError(`cannot write ${show(resolve(path))}: ${long}`);
  const top = resolve(folder);
  const abs = resolve(path);
  const name = words.folderName ?? show(top);
  let root: string;
  let real: string;
  try {
    root = realOf(top);
    real = realOf(abs);
  } catch (e) {
    throw action === "read" ? new FileRefused(show(abs), plainReason(e)) : fileError(action, show(abs), e);
  }
  if (within(root, real)) return real;
  const rel = relative(top, abs);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new PathOutside(`${show(abs)} lies outside ${name}: ${not}`);
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
      throw new PathOutside(
        `${show(at)} is a symbolic link to ${target}, outside ${name}: nothing is ${action === "write" ? "written" : "read"} through it${at === abs ? "" : ` (${show(abs)} ${not})`}`,
        "point the link inside the folder, or put the file or folder itself in its place",
      );
    }
  }
  throw new PathOutside(`${show(abs)} lies outside ${name}: ${not}`);
}

/** The most revsync reads of each kind of file (docs/decisions.md, "Files revsync reads"): a file over
 *  its cap is refused before it is read whole, so that no file holds memory without bound. */
export const READ_CAPS = {
  /** revsync.yaml, policy files, policy test files, package.json: written by hand, parsed whole. */
  text: 5 * 1024 * 1024,
  /** A batch's values CSV: some 50 bytes a row, so about a million rows. */
  values: 64 * 1024 * 1024,
  /** JSON revsync wrote or a CI gives it: a saved plan, an evidence record, the CI's event file. */
  json: 64 * 1024 * 1024,
  /** A lock record of this machine. */
  lock: 64 * 1024,
} as const;

const MiB = (n: number): string => (n >= 1024 * 1024 ? `${(n / 1048576).toFixed(n % 1048576 ? 1 : 0)} MiB` : `${Math.round(n / 1024)} KiB`);

/** What a file that is not a regular file is, in words. */
function typeWords(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/** A file revsync does not read: why, in words (`why`: "it is a named pipe (FIFO), not a regular file"). */
export class FileRefused extends UserError {
  constructor(
    shown: string,
    readonly why: string,
  ) {
    super(`cannot read ${shown}: ${why}`);
    this.name = "FileRefused";
  }
}

/** Reads a file a user, a repo or a CI gives revsync: a regular file only (a FIFO, a device such as
 *  /dev/zero, a socket or a folder is refused by its type before it is opened, and again on the opened
 *  file, so nothing blocks or reads without end), at most `maxBytes` (refused, not cut: a file over its
 *  cap, or one that grows past it while read). `inside`: the folder it must really lie in
 *  (realPathInsideToRead). Throws FileRefused, or the operating system's error (plainReason says it). */
export function readUserFileBytes(path: string, maxBytes: number, inside?: { folder: string; words?: PathWords }): Buffer {
  const real = inside ? realPathInsideToRead(inside.folder, path, inside.words) : path;
  const shown = inside?.words?.show?.(path) ?? path;
  const notAFile = (st: Stats): FileRefused => new FileRefused(shown, `it is ${typeWords(st)}, not a regular file`);
  const before = statSync(real);
  if (!before.isFile()) throw notAFile(before);
  const fd = openSync(real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notAFile(st);
    const over = (): FileRefused => new FileRefused(shown, `it is over ${MiB(maxBytes)}, the most revsync reads of such a file`);
    if (st.size > maxBytes) throw over();
    // One byte more than the file's size (and at most than the cap): a file that grew while read is
    // read on, one that grew past the cap refused, never cut. Not zero-filled: only the bytes read are
    // returned. A size of 0 may be a file whose size the system does not know (/proc).
    let buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, st.size ? st.size + 1 : 4096));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > maxBytes) throw over();
        const more = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 2));
        buf.copy(more);
        buf = more;
      }
      const r = readSync(fd, buf, n, buf.length - n, null);
      if (r === 0) return buf.subarray(0, n);
      n += r;
    }
  } finally {
    closeSync(fd);
  }
}

/** readUserFileBytes as UTF-8 text (invalid bytes replaced; strict readers decode the bytes themselves). */
export function readUserFile(path: string, maxBytes: number, inside?: { folder: string; words?: PathWords }): string {
  return readUserFileBytes(path, maxBytes, inside).toString("utf8");
}

/** A JSON file a CI gives revsync (its event file), or undefined when it cannot be read or parsed. */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readUserFile(path, READ_CAPS.json)) as unknown;
  } catch {
    return undefined;
  }
}

/** Why a read failed, in words: a FileRefused's own, a refusal's, else the operating system's (plainReason). */
export const readFailure = (e: unknown): string => (e instanceof FileRefused ? e.why : e instanceof UserError ? e.message : plainReason(e));

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
