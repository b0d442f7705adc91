import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { Agent, EnvHttpProxyAgent } from "./http.js";

// revsync loads three of undici's modules directly (src/api/http.ts) to spare each command ~100 ms of
// start-up. An undici upgrade that moves them must fail here, not in a user's pipeline.
describe("undici parts loaded directly", () => {
  it("are the very classes undici exports, with the request API on every dispatcher", () => {
    expect(Agent).toBe(undici.Agent);
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
    expect(typeof new Agent().request).toBe("function");
  });
});
