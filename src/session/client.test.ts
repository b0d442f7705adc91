import { describe, expect, it } from "vitest";
import { UserError } from "../errors.js";
import { msSetting } from "./client.js";

describe("numeric settings of the environment are checked before anything is sent", () => {
  it.each(["abc", "5s", "1.5", "-1", "0", "1e3", "99999999999999999999"])("REVSYNC_TIMEOUT_MS=%j is an error naming the setting", (raw) => {
    expect(() => msSetting({ REVSYNC_TIMEOUT_MS: raw }, "REVSYNC_TIMEOUT_MS", 30_000)).toThrow(UserError);
    expect(() => msSetting({ REVSYNC_TIMEOUT_MS: raw }, "REVSYNC_TIMEOUT_MS", 30_000)).toThrow(/^REVSYNC_TIMEOUT_MS must be a whole number of milliseconds/);
  });

  it("a whole number is taken; unset or empty takes the default; a wait may be 0", () => {
    expect(msSetting({ REVSYNC_TIMEOUT_MS: " 2500 " }, "REVSYNC_TIMEOUT_MS", 30_000)).toBe(2500);
    expect(msSetting({}, "REVSYNC_TIMEOUT_MS", 30_000)).toBe(30_000);
    expect(msSetting({ REVSYNC_TIMEOUT_MS: "" }, "REVSYNC_TIMEOUT_MS", 30_000)).toBe(30_000);
    expect(msSetting({ REVSYNC_MAX_RETRY_WAIT_MS: "0" }, "REVSYNC_MAX_RETRY_WAIT_MS", 0, 0)).toBe(0);
  });
});
