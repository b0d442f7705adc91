import { describe, expect, it } from "vitest";
import { ApiError, UserError } from "../errors.js";
import { settle } from "./outcome.js";

const err = (outcomeUnknown: boolean) => new ApiError({ method: "PATCH", path: "/x", status: 409, message: "no", outcomeUnknown });

describe("settle: what became of a write, as data", () => {
  it("passes a landed write through, with its result", async () => {
    expect(await settle(Promise.resolve({ kind: "done" as const, result: 1 }))).toEqual({ kind: "done", result: 1 });
    expect(await settle(Promise.resolve({ kind: "already" as const, status: "approved", result: 1 }))).toEqual({
      kind: "already",
      status: "approved",
      result: 1,
    });
    expect(await settle(Promise.resolve({ kind: "confirmed" as const, result: 1 }))).toEqual({ kind: "confirmed", result: 1 });
  });

  it("a service's failure is 'unknown' when the write may have landed, else 'refused'", async () => {
    const unknown = err(true);
    const refused = err(false);
    expect(await settle(Promise.reject(unknown))).toEqual({ kind: "unknown", error: unknown });
    expect(await settle(Promise.reject(refused))).toEqual({ kind: "refused", error: refused });
  });

  it("any other error is not an outcome: it is thrown", async () => {
    await expect(settle(Promise.reject(new UserError("bad flag")))).rejects.toBeInstanceOf(UserError);
  });
});
