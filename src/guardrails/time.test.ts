import { describe, expect, it } from "vitest";
import { cronOf, cronWindow, dayOf, quarterEndWindow, quarterOf, quarterStart, readMoment, readSpan } from "./time.js";

const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe("a fiscal calendar's quarters and windows", () => {
  const cal = { startMonth: 2, startDay: 1, timezone: "America/New_York" };
  it("counts quarters from the fiscal year's start, by the calendar's days", () => {
    expect(quarterOf({ y: 2026, m: 1, d: 31 }, cal) + 1).toBe(quarterOf({ y: 2026, m: 2, d: 1 }, cal));
    expect(quarterOf({ y: 2026, m: 4, d: 30 }, cal)).toBe(quarterOf({ y: 2026, m: 2, d: 1 }, cal));
    expect(quarterStart(quarterOf({ y: 2026, m: 12, d: 15 }, cal), cal)).toEqual({ y: 2026, m: 11, d: 1 });
    expect(dayOf(Date.parse("2026-02-01T04:59:00Z"), "America/New_York")).toEqual({ y: 2026, m: 1, d: 31 });
  });

  it("a quarter's end window opens and closes at the calendar's midnights, across a daylight-saving change", () => {
    const w = quarterEndWindow(3, 2, cal);
    // The quarter ending 30 April: 28 April 00:00 EDT to 3 May 00:00 EDT.
    const open = w(Date.parse("2026-04-28T04:00:00Z"));
    expect([iso(open.open?.from), iso(open.open?.until)]).toEqual(["2026-04-28T04:00:00.000Z", "2026-05-03T04:00:00.000Z"]);
    expect(w(Date.parse("2026-04-28T03:59:59Z")).open).toBeUndefined();
    // The quarter ending 31 October, whose window spans the change back to EST on 1 November.
    const fall = w(Date.parse("2026-11-02T12:00:00Z")).open;
    expect([iso(fall?.from), iso(fall?.until)]).toEqual(["2026-10-29T04:00:00.000Z", "2026-11-03T05:00:00.000Z"]);
  });

  it("reads moments, spans and cron openings, and merges openings that overlap", () => {
    expect(iso(readMoment("2026-03-08T02:30", "America/New_York"))).toBe("2026-03-08T07:30:00.000Z");
    expect(iso(readMoment("2026-02-28", "UTC", true))).toBe("2026-03-01T00:00:00.000Z");
    expect(readMoment("2026-02-30", "UTC")).toBeUndefined();
    expect([readSpan("2d12h"), readSpan("90m"), readSpan("0h"), readSpan("1w")]).toEqual([216_000_000, 5_400_000, undefined, undefined]);
    // Daily at 20:00 for 26 hours: each opening starts before the last ends, so it never closes.
    const w = cronWindow(cronOf("0 20 * * *", "UTC"), 26 * 3_600_000);
    const o = w(Date.parse("2026-05-05T10:00:00Z")).open;
    expect(o?.from).toBeDefined();
    expect((o?.until ?? 0) - Date.parse("2026-05-05T10:00:00Z")).toBeGreaterThan(365 * 86_400_000);
    // Weekly, Friday 18:00 for 60 hours: closed on a Tuesday, next opening on Friday.
    const weekly = cronWindow(cronOf("0 18 * * FRI", "UTC"), 60 * 3_600_000)(Date.parse("2026-05-05T10:00:00Z"));
    expect([weekly.open, iso(weekly.next?.from), iso(weekly.next?.until)]).toEqual([undefined, "2026-05-08T18:00:00.000Z", "2026-05-11T06:00:00.000Z"]);
  });
});
