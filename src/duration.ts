const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "90s", "10m", "1h30m", "250ms", or a plain number of seconds, in ms; undefined when it is none of these. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(n) * (UNITS[unit ?? "s"] ?? 1000);
  return ms;
}

/** 600000 → "10m", 90000 → "1m30s", 1500 → "1.5s". */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${+(ms / 1000).toFixed(3)}s`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = +((ms % 60_000) / 1000).toFixed(3);
  return `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s ? `${s}s` : ""}`;
}
