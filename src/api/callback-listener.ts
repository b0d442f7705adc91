import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** revsync's side of the implicit flow's redirect (docs/security.md, "Signing in through a browser"): a
 *  listener on 127.0.0.1 alone, on a port the OS picks, that serves one small page at the redirect's
 *  path. The token is in the URL's fragment, which a browser never sends to a server; the page hands
 *  the fragment back to the listener, and nothing else, then takes it out of the address bar and the
 *  history. The listener takes one answer, from that page alone (its own host and origin), gives it to
 *  `judge`, shows the person the verdict, and closes. */

export const CALLBACK_PATH = "/callback";
/** More than any token response's fragment; a larger body is refused unread. */
const MAX_ANSWER = 64 * 1024;

/** The page's one script: post the fragment back, clear it from the address bar, show the verdict. */
const SCRIPT = [
  "const answer = location.hash.slice(1);",
  "history.replaceState(null, '', location.pathname);",
  "const say = (text) => { document.getElementById('verdict').textContent = text; };",
  "fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: answer })",
  "  .then((r) => r.text()).then(say, () => say('revsync did not answer: see its terminal.'));",
].join("\n");
const SCRIPT_HASH = createHash("sha256").update(SCRIPT).digest("base64");

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>revsync sign-in</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>revsync</h1><p id="verdict">Handing the sign-in to revsync…</p>
<script>${SCRIPT}</script></body></html>
`;

/** Headers of every answer: nothing cached, no referrer, nothing framed; the page runs its own script
 *  and may speak to this listener alone. */
const HEADERS = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "content-security-policy": `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
};

/** What revsync makes of the answer: whether it was taken, and the sentence the page shows. */
export interface Verdict {
  accepted: boolean;
  message: string;
}

export interface CallbackListener {
  /** The redirect URI to give the authorization request: `http://127.0.0.1:<port>/callback`. */
  redirectUri: string;
  /** The verdict on the one answer the listener takes. */
  verdict: Promise<Verdict>;
  /** Stops listening (the answer came, the wait is over, or the person gave up). */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 for the one answer of a sign-in. */
export async function listenForAnswer(judge: (fragment: string) => Promise<Verdict>): Promise<CallbackListener> {
  let settle!: (v: Verdict) => void;
  let fail!: (e: unknown) => void;
  const verdict = new Promise<Verdict>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  // Marked (not rejected) until someone waits on it, so an early failure is never an unhandled one.
  verdict.catch(() => undefined);
  let taken = false;
  const server = createServer((req, res) => {
    void handle(req, res).catch(fail);
  });
  const origin = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = refused(req, origin());
    if (refusal) return answer(res, refusal.status, refusal.text);
    if (req.method === "GET") return answer(res, 200, PAGE, "text/html; charset=utf-8");
    if (taken) return answer(res, 409, "This sign-in was answered already: revsync takes one answer.");
    const body = await readAnswer(req);
    if (body === undefined) return answer(res, 413, "The answer is too large.");
    taken = true;
    let v: Verdict;
    try {
      v = await judge(body);
    } catch (e) {
      answer(res, 500, "revsync could not take the sign-in: see its terminal.");
      throw e;
    }
    answer(res, v.accepted ? 200 : 400, v.message);
    settle(v);
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    redirectUri: `${origin()}${CALLBACK_PATH}`,
    verdict,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Why a request is not the page or its answer: another path or method, another host (DNS rebinding:
 *  a name that resolves to 127.0.0.1 is not this listener's name), or an answer posted from another
 *  origin than the page's own (another site's page cannot hand revsync a token). */
function refused(req: IncomingMessage, origin: string): { status: number; text: string } | undefined {
  const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
  if (path !== CALLBACK_PATH || (req.method !== "GET" && req.method !== "POST")) return { status: 404, text: "Not found." };
  if (`http://${req.headers.host ?? ""}` !== origin) return { status: 400, text: "This listener answers to its own address only." };
  if (req.method === "POST" && req.headers.origin !== origin) return { status: 403, text: "An answer is taken from revsync's own page only." };
  return undefined;
}

function readAnswer(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_ANSWER) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function answer(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { ...HEADERS, "content-type": type, "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}
