import type { SspValueInput } from "../schema/generated/api.js";

/** Column order of the SSP batch template (spec 4.5) and of downloads (4.4). */
export const TEMPLATE_HEADER = [
  "product_id",
  "currency_code",
  "value_type",
  "below_mid_point",
  "mid_point",
  "above_mid_point",
  "effective_start_date",
  "effective_end_date",
] as const;

export const TEMPLATE_EXAMPLE_ROW = ["HW-1000", "USD", "Percent", "90", "100", "110", "2026-01-01", "2026-06-30"];

export interface CsvRow {
  line: number;
  cells: string[];
}

/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF. Returns rows with their 1-based line. */
export function parseCsv(text: string): CsvRow[] {
  // Most values files have no quotes at all: split lines and commas.
  if (!text.includes('"')) {
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const out: CsvRow[] = [];
    const lines = body.split(/\r?\n|\r/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line !== "") out.push({ line: i + 1, cells: line.split(",") });
    }
    return out;
  }
  const rows: CsvRow[] = [];
  let cells: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let rowHasContent = false;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quoted) {
      if (c === '"') {
        if (body[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        cell += c;
      }
      continue;
    }
    if (c === '"') {
      quoted = true;
      rowHasContent = true;
    } else if (c === ",") {
      cells.push(cell);
      cell = "";
      rowHasContent = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && body[i + 1] === "\n") i++;
      if (rowHasContent || cell !== "") {
        cells.push(cell);
        rows.push({ line: rowLine, cells });
      }
      cells = [];
      cell = "";
      rowHasContent = false;
      line++;
      rowLine = line;
    } else {
      cell += c;
      rowHasContent = true;
    }
  }
  if (rowHasContent || cell !== "") {
    cells.push(cell);
    rows.push({ line: rowLine, cells });
  }
  return rows;
}

function quote(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function formatCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((r) => r.map(quote).join(",")).join("\n") + "\n";
}

export function valuesToCsv(values: readonly SspValueInput[]): string {
  return formatCsv([
    TEMPLATE_HEADER,
    ...values.map((v) => [
      v.product_id,
      v.currency_code,
      v.value_type,
      String(v.below_mid_point),
      String(v.mid_point),
      String(v.above_mid_point),
      v.effective_start_date,
      v.effective_end_date,
    ]),
  ]);
}

export function templateCsv(): string {
  return formatCsv([TEMPLATE_HEADER, TEMPLATE_EXAMPLE_ROW]);
}
