/** A mistake the user can fix: printed as is, exit 1, no stack. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "UserError";
  }
}

/** Problems in the policy repo found before anything was sent: each with its file, line and column. */
export interface FileProblem {
  file: string;
  line: number;
  column: number;
  message: string;
  severity: "error" | "warning";
}

/** A policy repo that cannot be used as it is: the problems travel with the error, and the top-level
 *  handler prints them (stderr in text; inside the JSON error object with --format json). */
export class PolicyProblems extends UserError {
  constructor(
    message: string,
    readonly diagnostics: FileProblem[],
    hint?: string,
  ) {
    super(message, hint);
    this.name = "PolicyProblems";
  }
}

/** Which environment an error stopped: a failed run's JSON names it (revsync summary reads it). */
const ENVIRONMENT = new WeakMap<object, string>();

/** Says that `e` stopped the work of environment `name` (the first to say so is kept); returns `e`. */
export function inEnvironment(e: unknown, name: string): unknown {
  if (e !== null && typeof e === "object" && !ENVIRONMENT.has(e)) ENVIRONMENT.set(e, name);
  return e;
}

/** The environment whose work `e` stopped, when one said so (inEnvironment). */
export function environmentOf(e: unknown): string | undefined {
  return e !== null && typeof e === "object" ? ENVIRONMENT.get(e) : undefined;
}

/** Errors a report the command wrote holds already (a JUnit report lists a broken test file as an error
 *  case beside the cases that ran): the failure's view does not write them again. */
const REPORTED = new WeakSet<object>();

/** Says that the report the command wrote holds `e`; returns `e`. */
export function reported<E extends object>(e: E): E {
  REPORTED.add(e);
  return e;
}

/** Whether a report the command wrote holds `e` (reported). */
export const isReported = (e: unknown): boolean => e !== null && typeof e === "object" && REPORTED.has(e);

/** The JSON error object machine formats print on stdout when a command fails. */
export function errorObject(e: unknown): { error: Record<string, unknown> } {
  if (e instanceof PolicyProblems) return { error: { kind: "policy", message: e.message, hint: e.hint, diagnostics: e.diagnostics } };
  if (e instanceof UserError) return { error: { kind: "user", message: e.message, hint: e.hint } };
  if (e instanceof ApiError) {
    return {
      error: {
        kind: "service",
        message: e.message,
        method: e.method,
        path: e.path,
        status: e.status,
        problems: e.problems,
        outcome_unknown: e.outcomeUnknown,
        hint: e.hint,
      },
    };
  }
  return { error: { kind: "internal", message: e instanceof Error ? e.message : String(e) } };
}

export interface ServiceProblem {
  field?: string;
  message: string;
}

export interface ApiErrorOptions {
  method: string;
  path: string;
  /** 0: no answer. */
  status: number;
  /** The service's message, or ours when it gave none. */
  message: string;
  problems?: ServiceProblem[];
  retryable?: boolean;
  retryAfterMs?: number;
  /** true when the request may have been applied (connection lost after sending, 5xx on a write). */
  outcomeUnknown?: boolean;
  /** true when the service holds something else under the same name: never settled by sending again. */
  conflict?: boolean;
  /** What the person can do about it, when revsync knows better than the status's usual advice. */
  hint?: string;
}

/** The service refused or answered something unusable. */
export class ApiError extends Error {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly serviceMessage: string;
  readonly problems: ServiceProblem[];
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly outcomeUnknown: boolean;
  readonly conflict: boolean;
  readonly hint: string | undefined;

  constructor(o: ApiErrorOptions) {
    super(ApiError.describe(o.method, o.path, o.status, o.message, o.problems ?? []));
    this.name = "ApiError";
    this.method = o.method;
    this.path = o.path;
    this.status = o.status;
    this.serviceMessage = o.message;
    this.problems = o.problems ?? [];
    this.retryable = o.retryable ?? false;
    this.retryAfterMs = o.retryAfterMs;
    this.outcomeUnknown = o.outcomeUnknown ?? false;
    this.conflict = o.conflict ?? false;
    this.hint = o.hint;
  }

  /** The same error with some of its options changed. */
  private with(changes: Partial<ApiErrorOptions>): ApiError {
    return new ApiError({
      method: this.method,
      path: this.path,
      status: this.status,
      message: this.serviceMessage,
      problems: this.problems,
      retryable: this.retryable,
      retryAfterMs: this.retryAfterMs,
      outcomeUnknown: this.outcomeUnknown,
      conflict: this.conflict,
      hint: this.hint,
      ...changes,
    });
  }

  /** The same refusal, marked as possibly following an earlier send of the same request that landed. */
  withOutcomeUnknown(): ApiError {
    return this.with({ outcomeUnknown: true, hint: undefined });
  }

  /** The same error, with a hint of what to do instead. */
  withHint(hint: string): ApiError {
    return this.with({ hint });
  }

  /** The same error, its message said otherwise (e.g. with the number of attempts it took). */
  withMessage(message: string): ApiError {
    return this.with({ message });
  }

  /** A write that may have landed, whose read-back failed too: the step ends here, nothing is sent again. */
  static readBackFailed(e: ApiError, readErr: unknown): ApiError {
    const why = readErr instanceof Error ? readErr.message : String(readErr);
    return new ApiError({
      method: e.method,
      path: e.path,
      status: e.status,
      message: `outcome unknown: ${e.serviceMessage}, and reading it back failed (${why}); nothing was sent again: run revsync plan to see`,
      outcomeUnknown: true,
    });
  }

  static describe(method: string, path: string, status: number, message: string, problems: ServiceProblem[]): string {
    const what = status === 0 ? "no answer" : `${status} ${STATUS_WORDS[status] ?? ""}`.trim();
    const details = problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).filter((d) => d && d !== message);
    return `${method} ${path} failed (${what}): ${message}${details.length ? ` (${details.join("; ")})` : ""}`;
  }
}

const STATUS_WORDS: Record<number, string> = {
  400: "bad request",
  401: "not signed in",
  403: "permission denied",
  404: "not found",
  409: "conflict",
  412: "precondition failed",
  413: "body too large",
  429: "rate limited",
  500: "server error",
  502: "bad gateway",
  503: "unavailable",
  504: "gateway timeout",
};

/** The person cancelled at a prompt (Ctrl-C, EOF): nothing was changed; exit 130. */
export class Cancelled extends Error {
  constructor() {
    super("Cancelled, nothing was changed.");
    this.name = "Cancelled";
  }
}

/** A bug in revsync: printed with its stack and a request to report it. */
export class InternalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "InternalError";
  }
}

/** Words a person can act on, for the statuses they will meet. */
export function adviceFor(status: number): string | undefined {
  switch (status) {
    case 401:
      return "check REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD (or REVSYNC_TOKEN) for this environment";
    case 403:
      return "the signed-in user lacks the permission for this action";
    case 404:
      return "check the id or name: the service does not know it";
    case 409:
      return "the resource's state does not allow this; run `revsync plan` to see the current state";
    case 412:
      return "the resource changed since it was read; plan again";
    default:
      return undefined;
  }
}
