import { seedState } from "../emulator/seed.js";
import { startEmulator } from "../emulator/server.js";
import { DEMO } from "../emulator/seed.js";
import { runPlan, type PlanFlags } from "./plan.js";
import type { Output } from "./output.js";

/** npm start: the embedded default. A demo emulator in this process on a free port, then plan on
 *  the project's policies/ against it: a real plan within a minute of cloning. */
export async function runDemo(flags: PlanFlags, out: Output): Promise<number> {
  const emu = await startEmulator({ state: seedState("demo"), host: "127.0.0.1", port: 0 });
  // This run only: the demo emulator and its sign-in, above whatever the process environment holds.
  const envOverride = {
    REVSYNC_BASE_URL: emu.url,
    REVSYNC_AUTH_URL: emu.url,
    REVSYNC_REALM: DEMO.realm,
    REVSYNC_CLIENT_ID: DEMO.clientId,
    REVSYNC_CLIENT_SECRET: DEMO.clientSecret,
    REVSYNC_USERNAME: "alice",
    REVSYNC_PASSWORD: DEMO.users.alice.password,
    REVSYNC_TOKEN: undefined,
  };
  out.redactor.add(DEMO.clientSecret, "the demo's client secret");
  out.redactor.add(DEMO.users.alice.password, "the demo's password");
  out.info(`Started a demo emulator at ${emu.url} (seed demo) and signed in as alice.\nPlanning policies/ against it:\n`);
  try {
    const code = await runPlan({ ...flags, env: flags.env ?? "demo", envOverride }, out);
    out.info(
      "\nNext: run the emulator yourself (npx revsync emulator --seed demo), set the demo credentials\n(see the README's quick start) and try `npx revsync apply`, `npx revsync drift`, `npx revsync approvals list`.",
    );
    return code;
  } finally {
    await emu.close();
  }
}
