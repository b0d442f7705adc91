/** What every resource of the emulator shares: a refusal (EmuError), the caller, a body checked against
 *  the spec's schema, the If-Match check and a write's version bump. */
import { apiValidator, describeAjvErrors } from "../schema/ajv.js";

/** A refusal with its status (docs/decisions.md, "Failure statuses") and the error array the client reads. */
export class EmuError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: { field?: string; message: string }[] = [{ message }],
  ) {
    super(message);
  }
  body(): object {
    return { status: this.status, message: this.message, error: this.errors };
  }
}

export interface Caller {
  user: string;
  roles: string[];
}

export const epoch = (): number => Math.floor(Date.now() / 1000);

export function validate<T>(definition: string, body: unknown): T {
  const fn = apiValidator(definition);
  if (!fn(body)) throw new EmuError(400, "invalid request body", describeAjvErrors(fn.errors));
  return body as T;
}

export function bump(env: { version_id: string; last_modified_on: number; last_modified_by: string }, user: string, step = 1): void {
  env.version_id = String(Number(env.version_id) + step);
  // last_modified_on never goes backwards nor stands still across writes, even within one second.
  env.last_modified_on = Math.max(epoch(), env.last_modified_on + 1);
  env.last_modified_by = user;
}

export function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (ifMatch !== undefined && ifMatch.replace(/^W\/|"/g, "") !== version) {
    throw new EmuError(412, `precondition failed: version_id is ${version}, not ${ifMatch}`, [
      { field: "If-Match", message: `the resource is at version_id ${version}` },
    ]);
  }
}

/** A text field of an admin request, required (or its default). */
export const requiredText =
  (b: Record<string, unknown>) =>
  (k: string, dflt?: string): string => {
    const v = b[k] ?? dflt;
    if (typeof v !== "string" || v === "") throw new EmuError(400, `${k} is required (a string)`);
    return v;
  };
