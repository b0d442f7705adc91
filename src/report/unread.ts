import type { Unread } from "../shared/entries.js";

/** An unread address in words: an entry and what lies below it, or every entry of a kind. */
export const unreadWhat = (u: Unread): string => (u.address.includes("/") ? u.address : `${u.address}/… (all of it)`);

/** The error line of a run that could not read part of the service (plan, drift, apply). */
export const unreadError = (unread: readonly Unread[]): string =>
  `part of the service could not be read, even after retries: ${unread.map((u) => `${unreadWhat(u)} (${u.error})`).join("; ")}; nothing was said of ${unread.length === 1 ? "it" : "them"}: run again to read ${unread.length === 1 ? "it" : "them"}`;
