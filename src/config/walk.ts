import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every *.yaml / *.yml file below dir, in name order, skipping dot-folders and dot-files. The one walker
 *  of policy folders: loading, export and init use it. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".")) continue;
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.ya?ml$/i.test(entry.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}
