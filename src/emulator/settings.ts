/** What a test may change while the emulator runs (GET|POST /__admin/settings): reset restores the
 *  settings it started with. */
import { EmuError } from "./service.js";

export interface EmulatorSettings {
  if_match: boolean;
  /** --four-eyes: the user who reviewed a batch, or uploaded it, cannot approve it. */
  four_eyes: boolean;
  /** Access tokens that name nobody (random strings), as a service whose tokens are not JWTs issues;
   *  default false: JWTs naming their user (sub, preferred_username, email). */
  opaque_tokens: boolean;
  /** How far every write moves a resource's version_id (default 1): a service whose versions come from a
   *  counter shared with other resources moves them by more than one (the spec promises no step). */
  version_step: number;
}

/** The settings a run starts with unless told otherwise. */
export const DEFAULT_SETTINGS: EmulatorSettings = { if_match: true, four_eyes: false, opaque_tokens: false, version_step: 1 };

/** Settings a test posts, each known and of its type (400 naming the first that is not). */
export function checkSettings(b: Record<string, unknown>, settings: EmulatorSettings): void {
  for (const [k, v] of Object.entries(b)) {
    if (!(k in settings)) throw new EmuError(400, `unknown setting ${JSON.stringify(k)}; the settings are ${Object.keys(settings).join(", ")}`);
    if (k === "version_step") {
      if (!Number.isSafeInteger(v) || (v as number) < 1) throw new EmuError(400, `${k} must be a whole number, 1 or more`);
    } else if (typeof v !== "boolean") throw new EmuError(400, `${k} must be true or false`);
  }
}
