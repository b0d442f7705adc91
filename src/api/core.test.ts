import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { connectionReason, notTls, pathProblem } from "./core.js";

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

describe("connectionReason of real sockets (undici's request, as the client sends)", () => {
  it("a refused connection names the host and port; https to an http server is not retryable", async () => {
    const { request } = await import("undici");
    const { createServer } = await import("node:net");
    const { createServer: createHttp } = await import("node:http");
    // A port nothing listens on: one the OS gave and took back.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const refused = await request(`http://127.0.0.1:${port}/x`).catch((e: unknown) => e);
    expect(connectionReason(refused)).toBe(
      `connection refused by 127.0.0.1:${port}: nothing listens there; is the service (or revsync emulator) running, and is the URL right?`,
    );
    expect(notTls(refused)).toBe(false);
    const http = createHttp((_q, s) => s.end("plain"));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    try {
      const tls = await request(`https://127.0.0.1:${(http.address() as { port: number }).port}/x`).catch((e: unknown) => e);
      expect(connectionReason(tls)).toMatch(/^the server did not answer TLS: is the URL http\?/);
      expect(notTls(tls)).toBe(true);
    } finally {
      await new Promise((r) => http.close(r));
    }
  });
});

describe("a token of revsync login", () => {
  it("that has ended mid-run: the request is not sent, and the error says to sign in again (no other sign-in is tried)", async () => {
    const { ApiCore } = await import("./core.js");
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString("base64url");
    const token = `${part({ alg: "HS256" })}.${part({ preferred_username: "alice" })}.c2ln`;
    let now = 1_000;
    const core = new ApiCore({
      // Nothing listens here: the request must not be sent at all.
      baseUrl: "http://127.0.0.1:9",
      authUrl: "http://127.0.0.1:9",
      realm: "demo",
      credentials: { kind: "token", token, login: { expiresAt: 2_000, again: "revsync login --env demo" } },
      clock: { now: () => now, sleep: async () => undefined },
    });
    try {
      now = 2_000;
      const e: unknown = await core.call({ method: "GET", path: "/apis/x", kind: "read", schema: "bytes" }).catch((x: unknown) => x);
      if (!(e instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(e)}`);
      expect(e.message).toBe(
        "GET /apis/x failed (401 not signed in): not sent: the sign-in of revsync login (alice) ended at 1970-01-01T00:00:02.000Z: its token lives only as long as the service gave it",
      );
      expect(e.hint).toBe("sign in again: revsync login --env demo");
    } finally {
      await core.close();
    }
  });
});

describe("a path names one resource (pathProblem, checked before every send)", () => {
  it("a segment a URL resolves away, or an empty one, is named; the spec's own trailing slash of a read is not", () => {
    const tc = "/apis/policy-sets/v1/policy/tenant-configurations";
    expect(pathProblem({ path: `${tc}/.`, kind: "write" })).toContain('segment 6 ".": a URL takes "." for a step up the path');
    expect(pathProblem({ path: "/apis/policy-sets/v1/policy/ssp/review/../FY26-H2", kind: "write" })).toContain('".."');
    expect(pathProblem({ path: "/apis/policy-sets/v1/policy/ssp/approve/SSP-HW/%2E%2e", kind: "write" })).toContain("step up the path");
    expect(pathProblem({ path: "/apis/policy-sets/v1/policy/ssp/approve//FY26-H1", kind: "write" })).toContain("it is empty");
    expect(pathProblem({ path: `${tc}/`, kind: "write" })).toContain("it is empty");
    expect(pathProblem({ path: "/apis/errortransactions/v1/", kind: "read" })).toBeUndefined();
    expect(pathProblem({ path: `${tc}/TC-0001`, kind: "write" })).toBeUndefined();
    expect(pathProblem({ path: "/apis/policy-sets/v1/policy/ssp/approve/SSP-HW/FY26..H1", kind: "write" })).toBeUndefined();
  });
});
