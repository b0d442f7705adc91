import { Cancelled, UserError } from "../errors.js";
import { formatDuration } from "../duration.js";
import { listenForAnswer, type Verdict } from "./callback-listener.js";
import { checkUrl } from "./core.js";
import { authorizeUrl, checkAnswer, newBinding, type AcceptedToken } from "./implicit-flow.js";
import { keepSignIn, type Role, type SignInTarget } from "./sign-in-store.js";

/** `revsync login`: a person signs in through a browser by the spec's implicit flow (5.6), and revsync
 *  keeps the token for its lifetime (docs/security.md, "Signing in through a browser"). */

export interface LoginTarget extends SignInTarget {
  clientId: string;
  role: Role;
}

export interface LoginDeps {
  /** The folder of kept sign-ins (signInFolder). */
  folder: string;
  /** Opens the URL in the person's browser; false when nothing could. */
  open: (url: string) => Promise<boolean>;
  /** A line for the person (stderr, even with --quiet: the address is what they act on). */
  say: (line: string) => void;
  /** Every token revsync meets, before anything could print it: the output blanks it out. */
  onSecret: (token: string) => void;
  now: () => number;
  /** How long to wait for the browser's answer. */
  waitMs: number;
  /** Aborted when the person gives up (Ctrl-C). */
  signal?: AbortSignal;
}

export interface SignedIn {
  user: string | undefined;
  expiresAt: number;
  path: string;
}

/** Runs the flow: a listener on 127.0.0.1, the browser sent to the realm's authorization endpoint, one
 *  answer taken, checked (state, nonce, lifetime) and kept. Throws a UserError when no token was kept. */
export async function signInThroughBrowser(target: LoginTarget, deps: LoginDeps): Promise<SignedIn> {
  checkUrl("base_url", target.baseUrl);
  if (!target.realm) throw new UserError("no realm: set realm in revsync.yaml or REVSYNC_REALM");
  const binding = newBinding();
  let outcome: { refused: string } | { kept: SignedIn } | undefined;
  const judge = async (fragment: string): Promise<Verdict> => {
    // Any token in the answer is a secret, kept or not.
    const offered = new URLSearchParams(fragment.replace(/^#/, "")).get("access_token");
    if (offered) deps.onSecret(offered);
    const answer = checkAnswer(fragment, binding, deps.now());
    if (!answer.ok) {
      outcome = { refused: answer.reason };
      return { accepted: false, message: `Not signed in: ${answer.reason}.` };
    }
    const kept = keep(target, answer.accepted, deps);
    outcome = { kept };
    return { accepted: true, message: `Signed in to ${target.environment}${kept.user ? ` as ${kept.user}` : ""}. You may close this tab.` };
  };
  const listener = await listenForAnswer(judge);
  try {
    const url = authorizeUrl(target, listener.redirectUri, binding);
    const opened = await deps.open(url);
    deps.say(`${opened ? "Opening your browser to sign in; if it does not open, open this address" : "Open this address in a browser to sign in"}:\n  ${url}`);
    deps.say(`Waiting for the browser (up to ${formatDuration(deps.waitMs)}; Ctrl-C to stop)…`);
    const ended = await waitFor(listener.verdict, deps);
    if (ended === "timeout")
      throw new UserError(
        `no answer from the browser within ${formatDuration(deps.waitMs)}: nothing was kept`,
        "run revsync login again (--timeout gives longer)",
      );
  } finally {
    await listener.close();
  }
  if (!outcome) throw new UserError("the browser's answer was not taken: nothing was kept");
  if ("refused" in outcome) throw new UserError(`not signed in: ${outcome.refused}`, "run revsync login again, and finish the sign-in in the tab it opens");
  return outcome.kept;
}

function keep(target: LoginTarget, accepted: AcceptedToken, deps: LoginDeps): SignedIn {
  const { clientId, role, ...where } = target;
  try {
    const path = keepSignIn(deps.folder, where, role, { ...accepted, clientId }, deps.now());
    return { user: accepted.user, expiresAt: accepted.expiresAt, path };
  } catch (e) {
    if (e instanceof UserError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(
      `the token could not be kept in ${deps.folder} (${code ?? (e as Error).message}): nothing was kept`,
      "make that folder yours and writable, or set XDG_STATE_HOME (Linux) or HOME to another",
    );
  }
}

/** The verdict, or why the wait ended without one: the time is up, or the person gave up (Cancelled). */
function waitFor(verdict: Promise<Verdict>, deps: Pick<LoginDeps, "waitMs" | "signal">): Promise<Verdict | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), deps.waitMs);
  });
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(new Cancelled());
    if (deps.signal?.aborted) onAbort();
    else deps.signal?.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([verdict, timeout, aborted]).finally(() => {
    clearTimeout(timer);
    if (onAbort) deps.signal?.removeEventListener("abort", onAbort);
  });
}
