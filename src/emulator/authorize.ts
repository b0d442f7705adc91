import type { TenantState } from "./state.js";

/** The realm's authorization endpoint, as Keycloak serves the implicit flow (spec 5.6): a sign-in form
 *  for the tenant's users; on a right password, a redirect to the client's redirect URI with the access
 *  token in the URL's fragment (with `state`, and the `nonce` carried inside the token). An unknown
 *  client id, or a redirect URI that is not a loopback http:// address, gets an error page and no
 *  redirect: the emulator sends tokens to this machine only. */

export interface AuthorizePage {
  status: number;
  html: string;
  location?: string;
}

/** Issues an access token for a user signed in through the form: the token, its lifetime and session. */
export type IssueImplicit = (user: string, clientId: string, nonce: string | undefined) => { token: string; expiresIn: number; session: string };

const PARAMS = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce"] as const;

/** One request of the endpoint: GET shows the form, POST signs in with it. */
export function authorize(t: TenantState | undefined, method: string, query: URLSearchParams, form: URLSearchParams, issue: IssueImplicit): AuthorizePage {
  if (method !== "GET" && method !== "POST") return page(405, "Method not allowed", "Use GET (the form) or POST (its answer).");
  if (!t) return page(404, "Realm not found", "No such realm is served here.");
  const p = method === "GET" ? query : form;
  const clientId = p.get("client_id") ?? "";
  if (!clientId || t.clients[clientId] === undefined) return page(400, "Client not found", "The client id is not one of this realm's clients.");
  const redirect = loopbackRedirect(p.get("redirect_uri"));
  if (!redirect) return page(400, "Invalid parameter: redirect_uri", "The redirect URI must be a loopback http:// address (127.0.0.1, [::1] or localhost).");
  if (p.get("response_type") !== "token")
    return back(redirect, {
      error: "unsupported_response_type",
      error_description: "this emulator serves the implicit flow: response_type=token",
      state: p.get("state"),
    });
  if (method === "GET") return loginForm(t, p);
  const user = p.get("username") ?? "";
  const record = t.users[user];
  if (!record || record.password !== p.get("password")) return loginForm(t, p, "Invalid username or password.");
  const issued = issue(user, clientId, p.get("nonce") ?? undefined);
  return back(redirect, {
    state: p.get("state"),
    session_state: issued.session,
    access_token: issued.token,
    token_type: "Bearer",
    expires_in: String(issued.expiresIn),
    scope: "openid profile email",
  });
}

/** The redirect URI when it is a loopback http:// address without a fragment or credentials (RFC 8252,
 *  any port); undefined otherwise. */
function loopbackRedirect(text: string | null): URL | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "[::1]" || url.hostname === "localhost";
  return url.protocol === "http:" && loopback && !url.hash && !url.username && !url.password ? url : undefined;
}

/** A redirect back to the client, the answer in the fragment (a browser never sends it to a server). */
function back(redirect: URL, fields: Record<string, string | null>): AuthorizePage {
  const fragment = new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== null));
  return { status: 302, html: "", location: `${redirect.href}#${fragment.toString()}` };
}

function loginForm(t: TenantState, p: URLSearchParams, problem?: string): AuthorizePage {
  const hidden = PARAMS.map((k) => p.get(k))
    .map((v, i) => (v === null ? "" : `<input type="hidden" name="${PARAMS[i]}" value="${esc(v)}">`))
    .join("\n");
  const body = `${problem ? `<p id="input-error" role="alert">${esc(problem)}</p>\n` : ""}<form id="kc-form-login" method="post">
${hidden}
<label for="username">Username or email</label> <input id="username" name="username" autocomplete="username" autofocus value="${esc(p.get("username") ?? "")}"><br>
<label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"><br>
<button id="kc-login" type="submit">Sign In</button>
</form>`;
  return page(200, `Sign in to ${t.realm}`, body, true);
}

function page(status: number, title: string, body: string, raw = false): AuthorizePage {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>${esc(title)}</h1>
${raw ? body : `<p>${esc(body)}</p>`}
</body></html>
`;
  return { status, html };
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
