/** One line of the benchmark table: a measured figure, or a ratio between two with its target. */
export type Row = {
  section: string;
  figure: string;
  p50?: number;
  p95?: number;
  unit: string;
  count?: number;
  target?: string;
  met?: boolean;
  note?: string;
};

function cell(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "";
  if (Math.abs(value) >= 100) return String(Math.round(value));
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** A Markdown table (readable in a terminal, pasteable into docs/performance.md). */
export function renderTable(rows: readonly Row[]): string {
  const header = ["section", "figure", "p50", "p95", "unit", "n", "target", "met", "note"];
  const lines = rows.map((row) => [
    row.section,
    row.figure,
    cell(row.p50),
    cell(row.p95),
    row.unit,
    row.count === undefined ? "" : String(row.count),
    row.target ?? "",
    row.met === undefined ? "" : row.met ? "yes" : "NO",
    row.note ?? "",
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column]!.length)),
  );
  const format = (line: string[]) =>
    `| ${line.map((text, column) => text.padEnd(widths[column]!)).join(" | ")} |`;
  return [
    format(header),
    `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`,
    ...lines.map(format),
  ].join("\n");
}
