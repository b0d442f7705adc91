import { createHash } from "node:crypto";
import { LOOPBACK } from "./loopback.js";

/** A service's base URL as one name for one service, however it is spelt (docs/decisions.md, "One
 *  writer per tenant"): scheme and host in lower case, the scheme's default port dropped, no trailing
 *  slash, no query or fragment, no root dot after the host, and every name of this machine (localhost,
 *  127.x.x.x, ::1) as one, `localhost`. Text that is no URL is kept as written, less its trailing slashes. */
export function serviceUrl(baseUrl: string): string {
  const text = baseUrl.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return text.replace(/\/+$/, "");
  }
  // URL lower-cases the scheme and the host and drops the scheme's default port already.
  // A fully qualified name's root dot names the same host (DNS and TLS read it so).
  const name = u.hostname.replace(/\.$/, "");
  const host = LOOPBACK.test(name) || name === "[0:0:0:0:0:0:0:1]" ? "localhost" : name;
  return `${u.protocol}//${host}${u.port ? `:${u.port}` : ""}${u.pathname.replace(/\/+$/, "")}`;
}

/** One tenant of one service: its normalised base URL and its realm. `key` names it for a lock (sha256
 *  of both); `label` is a readable part for a name a person sees (host, port, path and realm, only the
 *  characters a git ref and a file name take). */
export interface TenantIdentity {
  url: string;
  realm: string;
  key: string;
  label: string;
}

export function tenantIdentity(baseUrl: string, realm: string): TenantIdentity {
  const url = serviceUrl(baseUrl);
  const key = createHash("sha256").update(`${url}\n${realm}`).digest("hex");
  const label = `${url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")}/${realm}`
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .slice(0, 60)
    .replace(/^[-.]+|[-.]+$/g, "");
  return { url, realm, key, label };
}
