import { createRequire } from "node:module";
import type { Dispatcher, Agent as AgentType, EnvHttpProxyAgent as EnvHttpProxyAgentType } from "undici";

// undici's index loads every part it has (fetch, websockets, caches, mocks): about 100 ms of every
// command's start on this project's machines, most of a `revsync plan` against a fast service. revsync
// uses three parts: these modules, loaded directly. test/http-parts.test.ts checks that they are the
// very classes undici exports, so an upgrade that moves them fails the tests rather than a user.
const load = createRequire(import.meta.url);

export const Agent = load("undici/lib/dispatcher/agent.js") as typeof AgentType;
export const EnvHttpProxyAgent = load("undici/lib/dispatcher/env-http-proxy-agent.js") as typeof EnvHttpProxyAgentType;
const DispatcherClass = load("undici/lib/dispatcher/dispatcher.js") as { prototype: object };
// What undici's index does: the request API on every dispatcher (Dispatcher.request, documented).
if (!("request" in DispatcherClass.prototype)) Object.assign(DispatcherClass.prototype, load("undici/lib/api/index.js"));

export type { Dispatcher };

/** The hosts that name this machine: the only ones plain http:// may reach (README, Security). */
export const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** A request through a dispatcher (undici's Dispatcher.request, with the URL split as it needs). */
export function request(url: string, opts: Omit<Dispatcher.RequestOptions, "origin" | "path"> & { dispatcher: Dispatcher }): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  const { dispatcher, ...rest } = opts;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
