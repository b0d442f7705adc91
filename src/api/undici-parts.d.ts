// The undici modules that src/api/http.ts imports directly: undici ships types for its index only.
// Each is a CommonJS module whose module.exports is the one value declared here.
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici";
  export = Agent;
}
declare module "undici/lib/dispatcher/env-http-proxy-agent.js" {
  import { EnvHttpProxyAgent } from "undici";
  export = EnvHttpProxyAgent;
}
declare module "undici/lib/dispatcher/dispatcher.js" {
  const Dispatcher: { prototype: object };
  export = Dispatcher;
}
declare module "undici/lib/api/index.js" {
  const api: object;
  export = api;
}
