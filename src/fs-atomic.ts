import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Writes a file so that a crash leaves either the old or the new content: a temp file beside the
 *  target, fsync, rename. Used for the emulator's state, saved plans and exported policy files. With
 *  `exact`, the file gets exactly `mode` whatever the umask (an edited file keeps its own). */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644, exact = false): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w", mode);
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
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
