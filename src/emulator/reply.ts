/** What the emulator answers, and the parts of an HTTP exchange every endpoint shares: reading a body
 *  (capped), parsing it as JSON, writing an answer out slowly (a trickle fault). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { withoutField } from "./faults.js";
import { EmuError } from "./service.js";

const MAX_BODY = 1024 * 1024;

export class Reply {
  /** A trickle fault: the body goes out one byte per this many ms. */
  trickleMs?: number;
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType = "application/json",
    readonly headers: Record<string, string> = {},
  ) {}
}

/** Writes a body one byte at a time, `ms` apart, until it is out or the client goes away. */
export function trickle(res: ServerResponse, body: Buffer, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || i >= body.length) {
        clearInterval(timer);
        if (!res.destroyed) res.end();
        resolve();
        return;
      }
      res.write(body.subarray(i, ++i));
    }, ms);
    res.on("close", () => {
      clearInterval(timer);
      resolve();
    });
  });
}

export function isLoopback(address: string | undefined): boolean {
  return !!address && (address.startsWith("127.") || address === "::1" || address === "::ffff:127.0.0.1" || address.startsWith("::ffff:127."));
}

export function readBody(req: IncomingMessage): Promise<string | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) over = true;
      else chunks.push(c);
    });
    req.on("end", () => resolve(over ? "too-large" : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function parseJson(text: string): unknown {
  if (text.trim() === "") throw new EmuError(400, "a JSON body is required", [{ field: "(body)", message: "is empty" }]);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EmuError(400, "the body is not valid JSON", [{ field: "(body)", message: "is not valid JSON" }]);
  }
}

/** A JSON answer without the fields omit faults name. */
export function omitted(reply: Reply, fields: readonly string[]): Reply {
  if (!fields.length || reply.contentType !== "application/json") return reply;
  const body = fields.reduce<unknown>((b, k) => withoutField(b, k), reply.body);
  return new Reply(reply.status, body, reply.contentType, reply.headers);
}

/** 429, with Retry-After in seconds unless null. */
export function tooMany(retryAfter: number | null): Reply {
  const headers: Record<string, string> = retryAfter === null ? {} : { "retry-after": String(retryAfter) };
  return new Reply(429, { status: 429, message: "too many requests", error: [{ message: "too many requests" }] }, "application/json", headers);
}
