import { resolve } from "node:path";
import { approvals } from "../api/resources.js";
import { ssp } from "../kinds/ssp/service.js";
import { ApiError } from "../errors.js";
import { formulaCells, runsAsFormula } from "../ssp/csv.js";
import { plural } from "../words.js";
import { writeUserFile } from "../user-files.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { withClient } from "./service-command.js";

// ---- SSP files (4.4, 4.5)

export async function runSspFile(
  what: "template" | "download",
  flags: GlobalFlags & { batch?: string; output?: string },
  out: Output,
  args: string[],
): Promise<number> {
  return withClient(flags, out, async (core) => {
    const bytes = what === "template" ? await template(core, flags.batch, out) : await download(core, args[0] ?? "");
    warnFormulas(bytes, out);
    if (flags.output) {
      // The file the user names gets the service's bytes whole; only what is printed is redacted.
      writeUserFile(resolve(out.io.cwd, flags.output), bytes);
      out.info(`wrote ${bytes.length} bytes to ${flags.output}`);
      const text = bytes.toString("latin1") + bytes.toString("utf8");
      if (out.redactor.redact(text) !== text)
        out.warn(`${flags.output} holds a secret of revsync's sign-in (the service's data has it): keep the file out of logs and artifacts`);
    } else out.raw(bytes);
    return 0;
  });
}

/** The service's file is given byte for byte (it is the service's, not a report of revsync's): a cell a
 *  spreadsheet would run as a formula is said on stderr instead (docs/decisions.md, "CSV is data"). */
function warnFormulas(bytes: Buffer, out: Output): void {
  const found = formulaCells(bytes.toString("utf8"), runsAsFormula);
  if (!found) return;
  out.warn(
    `the service's file holds ${plural(found.count, "cell")} that a spreadsheet would run as a formula (the first at line ${found.line}, column ${found.column}: it starts with =, +, -, @, a tab or a carriage return); it is given as the service holds it: open it in a spreadsheet as text, never as formulas`,
  );
}

/** The batch template. A batch the service does not have yet is the usual reason to want one: when it
 *  answers 404 for that name, the generic template (no batch_name) is what makes the new batch. */
async function template(core: Parameters<typeof ssp.template>[0], batch: string | undefined, out: Output): Promise<Buffer> {
  try {
    return await ssp.template(core, batch);
  } catch (e) {
    if (batch === undefined || !(e instanceof ApiError) || e.status !== 404) throw e;
    out.info(`Note: the service has no batch named ${JSON.stringify(batch)} yet, so this is the generic template; fill it in to make that batch.`);
    return ssp.template(core);
  }
}

/** An SSP batch's file. A file id the service does not know is often another kind of file's: a manual
 *  upload's (its approval shows its file_id, UPL-…), which this endpoint does not serve: said, with where
 *  a batch's file id is found. */
async function download(core: Parameters<typeof ssp.download>[0], fileId: string): Promise<Buffer> {
  try {
    return await ssp.download(core, fileId);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    const upload = ((await approvals.pending(core).catch(() => undefined))?.records ?? []).find((r) => r.file_id === fileId);
    const batches = "ssp download takes the file id of an SSP batch: revsync ssp batches lists them";
    throw e.withHint(
      upload
        ? `${fileId} is the file of the manual upload ${upload.approval_id ?? ""} (${upload.file_name ?? "a file"}, revsync approvals list), which the interface does not download; ${batches}`
        : batches,
    );
  }
}
