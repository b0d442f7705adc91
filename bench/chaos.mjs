// npm run chaos [-- --seeds N] [-- --scale X]: the chaos suite over N seeds (default 20), as a table;
// --scale multiplies every fault's rate (1.5: half as many faults again).
import { runSeed } from "../build/testing/chaos.js";

const arg = process.argv.indexOf("--seeds");
const count = arg > 0 ? Number(process.argv[arg + 1]) : 20;
const scaleArg = process.argv.indexOf("--scale");
const scale = scaleArg > 0 ? Number(process.argv[scaleArg + 1]) : 1;
const rows = [];
console.log("| seed | resources | requests | faults injected | applies | apply exits | final plan | duplicates | seconds |");
console.log("|---:|---:|---:|---:|---:|---|---|---:|---:|");
for (let seed = 1; seed <= count; seed++) {
  const r = await runSeed(seed, { scale });
  rows.push(r);
  console.log(
    `| ${r.seed} | ${r.resources} | ${r.requests} | ${r.faults} | ${r.applies} | ${r.exit_codes} | ${r.final_plan} | ${r.duplicates} | ${r.seconds} |`,
  );
  if (r.detail) console.error(r.detail);
}
const ok = rows.every((r) => r.converged && r.duplicates === 0);
console.log(
  `\n${rows.filter((r) => r.converged).length}/${rows.length} seeds converged within five applies; ${rows.reduce((n, r) => n + r.duplicates, 0)} duplicate policies.`,
);
process.exit(ok ? 0 : 1);
