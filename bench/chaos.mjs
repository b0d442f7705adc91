// npm run chaos [-- --seeds N] [-- --scale X]: the chaos suite over N seeds (default 20), as a table;
// --scale multiplies every fault's rate (1.5: half as many faults again). At scale 1 about a quarter of
// the requests fail; every seed must converge within three applies, with no duplicate.
import { runSeed } from "../build/testing/chaos.js";

const arg = process.argv.indexOf("--seeds");
const count = arg > 0 ? Number(process.argv[arg + 1]) : 20;
const scaleArg = process.argv.indexOf("--scale");
const scale = scaleArg > 0 ? Number(process.argv[scaleArg + 1]) : 1;
const rows = [];
console.log("| seed | resources | requests | faults injected | failed | applies | apply exits | final plan | duplicates | seconds |");
console.log("|---:|---:|---:|---:|---:|---:|---|---|---:|---:|");
for (let seed = 1; seed <= count; seed++) {
  const r = await runSeed(seed, { scale });
  rows.push(r);
  console.log(
    `| ${r.seed} | ${r.resources} | ${r.requests} | ${r.faults} | ${Math.round((100 * r.faults) / r.requests)}% | ${r.applies} | ${r.exit_codes} | ${r.final_plan} | ${r.duplicates} | ${r.seconds} |`,
  );
  if (r.detail) console.error(r.detail);
}
const ok = rows.every((r) => r.converged && r.duplicates === 0);
console.log(
  `\n${rows.filter((r) => r.converged).length}/${rows.length} seeds converged within three applies; ${rows.reduce((n, r) => n + r.duplicates, 0)} duplicate policies; ${Math.round((100 * rows.reduce((n, r) => n + r.faults, 0)) / rows.reduce((n, r) => n + r.requests, 0))}% of ${rows.reduce((n, r) => n + r.requests, 0)} requests met a fault.`,
);
process.exit(ok ? 0 : 1);
