import { describe, expect, it } from "vitest";
import { connectionReason } from "./core.js";

describe("connectionReason", () => {
  it("a refused connection says where and what to check, once", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:4799"), { code: "ECONNREFUSED", address: "127.0.0.1", port: 4799 });
    const reason = connectionReason(Object.assign(new TypeError("fetch failed"), { cause }));
    expect(reason).toBe("connection refused by 127.0.0.1:4799: nothing listens there; is the service (or revsync emulator) running, and is the URL right?");
  });

  it("other socket errors keep their message and code, without repeats", () => {
    const cause = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(connectionReason(Object.assign(new Error("other side closed"), { cause }))).toBe("other side closed: ECONNRESET: read ECONNRESET");
  });
});
