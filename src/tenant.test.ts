import { describe, expect, it } from "vitest";
import { serviceUrl, tenantIdentity } from "./tenant.js";

describe("one tenant, however its URL is spelt", () => {
  it("scheme and host in lower case, the default port dropped, no trailing slash, every name of this machine one", () => {
    const one = [
      "http://127.0.0.1:4010",
      "http://localhost:4010",
      "http://localhost:4010/",
      "HTTP://LocalHost:4010//",
      "http://[::1]:4010",
      "http://127.0.0.1:4010?x#y",
    ];
    expect(new Set(one.map(serviceUrl))).toEqual(new Set(["http://localhost:4010"]));
    expect(serviceUrl("https://Revenue.Example.COM:443/tenant/")).toBe("https://revenue.example.com/tenant");
    expect(serviceUrl("https://revenue.example.com:8443")).toBe("https://revenue.example.com:8443");
    // A fully qualified name (its root's dot) is the same host: DNS and TLS both read it so, and a
    // promote_from source spelt so would otherwise be production itself under another key.
    expect(serviceUrl("https://revenue.example.com./tenant")).toBe("https://revenue.example.com/tenant");
    expect(serviceUrl("http://localhost.:4010")).toBe("http://localhost:4010");
    // Another port, path or scheme is another service.
    expect(serviceUrl("http://localhost:4011")).not.toBe(serviceUrl("http://localhost:4010"));
    expect(serviceUrl("https://revenue.example.com/a")).not.toBe(serviceUrl("https://revenue.example.com/b"));
  });

  it("a tenant is the URL and the realm: its key is one for every spelling; its label is readable and fit for a ref or a file name", () => {
    const a = tenantIdentity("http://127.0.0.1:4010", "demo");
    expect(tenantIdentity("http://localhost:4010/", "demo")).toEqual(a);
    expect(tenantIdentity("http://localhost:4010", "other").key).not.toBe(a.key);
    expect(a.label).toBe("localhost-4010-demo");
    expect(tenantIdentity("https://revenue.example.com/t/..", "acme corp").label).toBe("revenue.example.com-acme-corp");
    expect(tenantIdentity(`https://${"x".repeat(100)}.example.com`, "r").label.length).toBeLessThanOrEqual(60);
  });
});
