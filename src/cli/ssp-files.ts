import { ssp } from "../api/resources.js";
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
    const bytes = what === "template" ? await ssp.template(core, flags.batch) : await ssp.download(core, args[0] ?? "");
    if (flags.output) {
      writeUserFile(flags.output, bytes);
      out.info(`wrote ${bytes.length} bytes to ${flags.output}`);
    } else process.stdout.write(bytes);
    return 0;
  });
}
