import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every *.yaml / *.yml file below dir, in name order, skipping dot-folders and dot-files. The one walker
 *  of policy folders: loading, export and init use it. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    // Names in code-unit order, the same on every machine whatever its locale (localeCompare is not, and
    // starting ICU's collation for it cost each command some 60 M instructions).
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith(".")) continue;
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.ya?ml$/i.test(entry.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}
