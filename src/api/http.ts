import { setFlagsFromString } from "node:v8";
import type { Dispatcher } from "undici";
import AgentModule from "undici/lib/dispatcher/agent.js";
import EnvHttpProxyAgentModule from "undici/lib/dispatcher/env-http-proxy-agent.js";
import DispatcherClass from "undici/lib/dispatcher/dispatcher.js";
import requestApi from "undici/lib/api/index.js";

// undici's index loads every part it has (fetch, websockets, caches, mocks): about 100 ms of every
// command's start on this project's machines, most of a `revsync plan` against a fast service. revsync
// uses three parts: these modules, imported directly (plain imports, so that the bundled CLI holds
// them; their types are in undici-parts.d.ts). src/api/http.test.ts checks that they are the very
// classes undici exports, so an upgrade that moves them fails the tests rather than a user.
export const Agent = AgentModule;
export const EnvHttpProxyAgent = EnvHttpProxyAgentModule;
// What undici's index does: the request API on every dispatcher (Dispatcher.request, documented).
if (!("request" in DispatcherClass.prototype)) Object.assign(DispatcherClass.prototype, requestApi);

export type { Dispatcher };

import { LOOPBACK } from "../loopback.js";
export { LOOPBACK };

/** Why a URL may not be used because it holds credentials (user info: `https://user:password@host`),
 *  in words that show neither; undefined when it holds none. revsync signs in only with the sign-in
 *  variables, so a URL that carries a user or password is refused wherever it comes from (a file, a
 *  variable) before anything is sent or shown. Text that no URL parser reads counts when it has an @. */
export function urlCredentials(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return text.includes("@") ? "it holds an @ and is not a URL revsync can read (a user name or password would not be shown)" : undefined;
  }
  if (url.username === "" && url.password === "") return undefined;
  return `it holds a ${url.password !== "" ? "user name and password" : "user name"} (${url.protocol}//[credentials]@${url.host}): credentials never go in a URL; revsync signs in with REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD (or REVSYNC_TOKEN) from the environment`;
}

let quickParser = false;

/** A request through a dispatcher (undici's Dispatcher.request, with the URL split as it needs). */
export function request(url: string, opts: Omit<Dispatcher.RequestOptions, "origin" | "path"> & { dispatcher: Dispatcher }): Promise<Dispatcher.ResponseData> {
  if (!quickParser) {
    // undici parses HTTP/1 with llhttp compiled to WebAssembly when its first connection opens. V8
    // compiles it quickly (Liftoff), then, once a function has run enough, again with its optimizing
    // compiler (TurboFan): a quarter of the CPU of a whole `revsync plan` against a local service, for
    // parsing that was fast enough. This budget keeps the quick code for any run of a command (V8 still
    // falls back to TurboFan where it must, unlike with --liftoff-only, a testing flag that aborts the
    // process instead). Set here, not as the CLI starts: a changed flag makes V8 refuse code cached
    // with other flags, Node's for the built-in modules loaded after it (by now they are loaded) and
    // revsync's own (src/load-cli.ts), which a run that makes it therefore takes first.
    const beforeFlagsChange = (globalThis as Record<symbol, unknown>)[Symbol.for("revsync.beforeV8FlagsChange")];
    if (typeof beforeFlagsChange === "function") beforeFlagsChange();
    setFlagsFromString("--wasm-tiering-budget=2000000000");
    quickParser = true;
  }
  const u = new URL(url);
  const { dispatcher, ...rest } = opts;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}

/** What is wrong with a URL revsync is to send to (a sentence that follows the URL's name), or nothing. */
export function urlProblem(value: string): string | undefined {
  const credentials = urlCredentials(value);
  if (credentials) return `: ${credentials}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return ` is not a URL: ${JSON.stringify(value)}`;
  }
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname))
    return ` uses http:// for ${url.hostname}: only loopback hosts may use plain http; use https://`;
  if (url.protocol !== "http:" && url.protocol !== "https:") return ` must be an http(s) URL, got ${url.protocol}`;
  return undefined;
}
