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

export interface ServiceProblem {
  field?: string;
  message: string;
}

/** The service refused or answered something unusable. */
export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly serviceMessage: string,
    readonly problems: ServiceProblem[] = [],
    readonly retryable = false,
    readonly retryAfterMs?: number,
    /** true when the request may have been applied (connection lost after sending, 5xx on a write). */
    readonly outcomeUnknown = false,
  ) {
    super(ApiError.describe(method, path, status, serviceMessage, problems));
    this.name = "ApiError";
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
