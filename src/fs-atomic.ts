import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** mkdir -p, one folder at a time. Node's recursive mkdir never returns where a folder cannot be made
 *  though its parent exists (under /proc, which answers ENOENT): it spins at full CPU. Here the first
 *  folder that cannot be made is an error, as mkdir's own. */
export function makeFolders(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d, mode === undefined ? undefined : { mode });
    } catch (e) {
      // Made meanwhile by another process: as good.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}

/** Writes a file so that a crash leaves either the old or the new content: a temp file beside the
 *  target, fsync, rename. Used for the emulator's state, saved plans and exported policy files. With
 *  `exact`, the file gets exactly `mode` whatever the umask (an edited file keeps its own). */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644, exact = false): void {
  const tmp = writeTemp(path, data, mode, exact);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Writes a new file atomically and never over another: the temp file is linked to its name, which fails
 *  (EEXIST) when a file of that name exists, then the temp name is removed. A crash leaves no file or the
 *  whole one (and, at worst, a stray temp file). Used for apply's evidence records. */
export function writeFileExclusive(path: string, data: string | Uint8Array, mode = 0o644): void {
  const tmp = writeTemp(path, data, mode, false);
  try {
    linkSync(tmp, path);
  } catch (e) {
    // A file system without hard links: an exclusive create still never writes over a file.
    if (!NO_LINKS.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
    const fd = openSync(path, "wx", mode);
    try {
      if (typeof data === "string") writeSync(fd, data);
      else writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

function writeTemp(path: string, data: string | Uint8Array, mode: number, exact: boolean): string {
  makeFolders(dirname(path));
  // Its own name: two writers of one path in one process (runs in process, each their own) never share it.
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  // A new file of its own: whatever holds the temp name (a stray file, a link) is removed, never written through.
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, "wx", mode);
  try {
    if (exact) fchmodSync(fd, mode);
    if (typeof data === "string") writeSync(fd, data);
    else writeSync(fd, data);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  return tmp;
}
