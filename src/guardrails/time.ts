/** Time as guardrails read it: days and quarters of a fiscal calendar in its time zone, and freeze
 *  windows (around each quarter's end, from one day to another, or opened by a cron expression for a
 *  while). The time zone arithmetic (a day's midnight in America/New_York, across a daylight-saving
 *  change) is @date-fns/tz's TZDate, and a cron expression's next opening croner's: both well kept and
 *  dependency-free, where hand-written versions get the edges (a skipped hour, a month's last day,
 *  day-of-month or day-of-week) wrong. */
import { TZDate } from "@date-fns/tz";
import { Cron } from "croner";

/** A fiscal calendar: the month and day its year starts, and the time zone its days are in. */
export interface Calendar {
  startMonth: number;
  startDay: number;
  timezone: string;
}

export const DEFAULT_CALENDAR: Calendar = { startMonth: 1, startDay: 1, timezone: "UTC" };

/** A day of a calendar: year, month (1-12) and day. */
export interface Day {
  y: number;
  m: number;
  d: number;
}

/** Whether a time zone is one this machine knows (IANA names: America/New_York, UTC). */
export function knownZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** YYYY-MM-DD as a day that exists, or undefined. */
export function readDay(text: string): Day | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d ? { y, m: mo, d } : undefined;
}

export const dayText = (x: Day): string => `${x.y}-${String(x.m).padStart(2, "0")}-${String(x.d).padStart(2, "0")}`;

/** The instant a local time of a time zone names (a time a daylight-saving change skips: the instant
 *  just after it). Months and days past their end roll over (day 32 is the next month's 1st). */
export const instantOf = (x: Day, tz: string, hour = 0, minute = 0): number => new TZDate(x.y, x.m - 1, x.d, hour, minute, 0, 0, tz).getTime();

/** The day an instant falls on in a time zone. */
export function dayOf(instant: number, tz: string): Day {
  const t = new TZDate(instant, tz);
  return { y: t.getFullYear(), m: t.getMonth() + 1, d: t.getDate() };
}

/** Whole days from `a` to `b` (b - a; calendar days, whatever a daylight-saving change does). */
export const daysBetween = (a: Day, b: Day): number => Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000);

/** A day's quarter of the fiscal calendar, counted from year 0: one more each quarter. */
export function quarterOf(x: Day, cal: Pick<Calendar, "startMonth" | "startDay">): number {
  const months = x.y * 12 + (x.m - 1) - (x.d < cal.startDay ? 1 : 0) - (cal.startMonth - 1);
  return Math.floor(months / 3);
}

/** The first day of the quarter numbered `q` (quarterOf). */
export function quarterStart(q: number, cal: Pick<Calendar, "startMonth" | "startDay">): Day {
  const months = q * 3 + (cal.startMonth - 1);
  return { y: Math.floor(months / 12), m: (((months % 12) + 12) % 12) + 1, d: cal.startDay };
}

/** One opening of a window: from, until (instants, until not included). */
export interface Opening {
  from: number;
  until: number;
}

/** A window's opening that holds `now`, else its next one (undefined: none to come). */
export type WindowTime = (now: number) => { open: Opening | undefined; next: Opening | undefined };

/** Around each fiscal quarter's end: from `before` days before the next quarter's first day (its
 *  midnight) to `after` days after it. */
export function quarterEndWindow(before: number, after: number, cal: Calendar): WindowTime {
  const around = (q: number): Opening => {
    const start = quarterStart(q, cal);
    return { from: instantOf({ ...start, d: start.d - before }, cal.timezone), until: instantOf({ ...start, d: start.d + after }, cal.timezone) };
  };
  return (now) => {
    const q = quarterOf(dayOf(now, cal.timezone), cal);
    // The quarter that started (its end's window may reach into it) and the next two starts.
    const openings = [around(q), around(q + 1), around(q + 2)];
    return { open: openings.find((o) => o.from <= now && now < o.until), next: openings.find((o) => o.from > now) };
  };
}

/** A local time as a window's from or to: YYYY-MM-DD (its midnight, or with `endOfDay` the next day's) or
 *  YYYY-MM-DDTHH:MM; undefined when it is neither, or no such day. */
export function readMoment(text: string, tz: string, endOfDay = false): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2}))?$/.exec(text);
  const day = m && readDay(m[1] as string);
  if (!m || !day) return undefined;
  if (m[2] === undefined) return instantOf(endOfDay ? { ...day, d: day.d + 1 } : day, tz);
  const [h, min] = [Number(m[2]), Number(m[3])];
  return h < 24 && min < 60 ? instantOf(day, tz, h, min) : undefined;
}

/** From one moment to another, once. */
export const datesWindow =
  (from: number, until: number): WindowTime =>
  (now) => ({ open: from <= now && now < until ? { from, until } : undefined, next: from > now ? { from, until } : undefined });

/** "2d12h" as milliseconds (days, hours, minutes); undefined when it is none. */
export function readSpan(text: string): number | undefined {
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text.trim());
  if (!m || (m[1] === undefined && m[2] === undefined && m[3] === undefined)) return undefined;
  const ms = (Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 3_600_000 + Number(m[3] ?? 0) * 60_000;
  return ms > 0 ? ms : undefined;
}

/** A cron expression's parser, in a time zone (vixie cron's day-of-month or day-of-week): throws an
 *  Error in words for an expression it cannot read. */
export const cronOf = (expression: string, tz: string): Cron => new Cron(expression, { timezone: tz, domAndDow: false, paused: true });

/** How many overlapping openings of a cron window are merged into one, at most. */
const MERGE_LIMIT = 2000;

/** Opened by a cron expression for `span` ms each time: open at `now` when an opening started within
 *  the last `span` (openings that overlap make one). */
export function cronWindow(cron: Cron, span: number): WindowTime {
  const after = (t: number): number | undefined => cron.nextRun(new Date(t))?.getTime();
  const opening = (from: number): Opening => {
    let until = from + span;
    // An opening that starts before this one ends keeps it open; one that never closes is followed for
    // MERGE_LIMIT openings or a year and a month, whichever comes first (its until is then a least).
    for (let i = 0, n = after(from); n !== undefined && n < until && i < MERGE_LIMIT && until - from < 400 * 86_400_000; i++, n = after(n)) until = n + span;
    return { from, until };
  };
  return (now) => {
    const started = after(now - span - 1);
    if (started !== undefined && started <= now) {
      const o = opening(started);
      if (now < o.until) return { open: o, next: undefined };
    }
    const n = after(now);
    return { open: undefined, next: n === undefined ? undefined : opening(n) };
  };
}

/** An instant as its local time in a time zone: "2026-03-27 18:00 Europe/Berlin". */
export function localWords(instant: number, tz: string): string {
  const t = new TZDate(instant, tz);
  const two = (n: number): string => String(n).padStart(2, "0");
  return `${dayText({ y: t.getFullYear(), m: t.getMonth() + 1, d: t.getDate() })} ${two(t.getHours())}:${two(t.getMinutes())} ${tz}`;
}
