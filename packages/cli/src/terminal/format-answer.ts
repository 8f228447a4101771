import { stringify as stringifyCsv } from "csv-stringify/sync";
import { cutToWidth, displayWidth } from "./display-width.ts";
import { escapeForTerminal } from "./escape-for-terminal.ts";

/**
 * How `ask` prints an answer. The answer is the text after the program's `RESULT:`; when it is
 * JSON, `table` lays it out for reading: a list of records as an aligned table, a dict as key/value
 * lines, anything else as itself. `json` prints the parsed value as JSON, `csv` as CSV rows, `text`
 * the answer exactly as the program printed it. Every cell and line is escaped for the terminal.
 */
export const answerFormats = ["table", "json", "csv", "text"] as const;
export type AnswerFormat = (typeof answerFormats)[number];

/** Cells longer than this are cut, ending in the marker. */
export const maxCellCharacters = 40;
export const cutMarker = "…";
const maxDecimals = 6;

export function formatAnswer(answer: string, format: AnswerFormat): string {
  if (format === "text") return withNewline(escapeForTerminal(answer));
  const value = parseAnswer(answer);
  if (format === "json") return withNewline(escapeForTerminal(JSON.stringify(value, null, 2)));
  if (format === "csv") return escapeForTerminal(toCsv(value));
  return withNewline(toTable(value));
}

/** The answer as a JSON value; text that is not JSON is a string. */
export function parseAnswer(answer: string): unknown {
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
}

type Row = Record<string, unknown>;

function isRecord(value: unknown): value is Row {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRecordList(value: unknown): value is Row[] {
  return Array.isArray(value) && value.length > 0 && value.every(isRecord);
}

function toTable(value: unknown): string {
  if (isRecordList(value)) return recordTable(value);
  if (Array.isArray(value) && value.length > 0 && value.every((item) => !isRecord(item))) {
    return recordTable(value.map((item) => ({ value: item })));
  }
  if (isRecord(value)) return keyValueLines(value);
  return escapeForTerminal(typeof value === "string" ? value : JSON.stringify(value));
}

/** The columns of a list of records: every key, in the order first seen. */
function columnsOf(rows: Row[]): string[] {
  const columns = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) columns.add(key);
  return [...columns];
}

function recordTable(rows: Row[]): string {
  const columns = columnsOf(rows);
  const cells = columns.map((column) => formatColumn(rows.map((row) => row[column])));
  const numeric = columns.map((column) => rows.every((row) => isNumberOrBlank(row[column])));
  const headers = columns.map((column) => cut(oneLine(column)));
  const widths = columns.map((_, index) =>
    Math.max(width(headers[index]!), ...cells[index]!.map((cell) => width(cell))),
  );
  const line = (values: string[]) =>
    values
      .map((text, index) => (numeric[index] ? padStart(text, widths[index]!) : padEnd(text, widths[index]!)))
      .join("  ")
      .trimEnd();
  return [
    line(headers),
    line(widths.map((size) => "─".repeat(size))),
    ...rows.map((_, rowIndex) => line(cells.map((column) => column[rowIndex]!))),
  ].join("\n");
}

function keyValueLines(value: Row): string {
  const keys = Object.keys(value).map((key) => cut(oneLine(key)));
  const keyWidth = Math.max(0, ...keys.map(width));
  return Object.values(value)
    .map((item, index) => {
      const text = typeof item === "number" ? formatNumber(item, decimalsOf(item)) : cellText(item);
      return `${padEnd(`${keys[index]!}:`, keyWidth + 1)}  ${text}`;
    })
    .join("\n");
}

function isNumberOrBlank(value: unknown): boolean {
  return typeof value === "number" || value === null || value === undefined;
}

/** A column's cells as text: numbers share one number of decimals, with thousands separators. */
function formatColumn(values: unknown[]): string[] {
  const numbers = values.filter((value): value is number => typeof value === "number");
  const decimals = Math.max(0, ...numbers.map(decimalsOf));
  return values.map((value) => (typeof value === "number" ? formatNumber(value, decimals) : cellText(value)));
}

function decimalsOf(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return 0;
  const text = String(value);
  if (text.includes("e")) return maxDecimals;
  return Math.min(maxDecimals, text.split(".")[1]?.length ?? 0);
}

function formatNumber(value: number, decimals: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return cut(oneLine(text));
}

/** One line, escaped: a newline in a cell would break the table. */
function oneLine(text: string): string {
  return escapeForTerminal(text, { keepNewlines: false });
}

/** A cell at most maxCellCharacters columns wide (a wide character counts two), marked where cut. */
function cut(text: string): string {
  if (displayWidth(text) <= maxCellCharacters) return text;
  return `${cutToWidth(text, maxCellCharacters - displayWidth(cutMarker))}${cutMarker}`;
}

/** Columns on a terminal, not code points: CJK and emoji take two, so the table's columns line up. */
function width(text: string): number {
  return displayWidth(text);
}

function padEnd(text: string, size: number): string {
  return text + " ".repeat(Math.max(0, size - width(text)));
}

function padStart(text: string, size: number): string {
  return " ".repeat(Math.max(0, size - width(text))) + text;
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

/** CSV of an answer: records as rows under a header, a dict as key,value rows, a scalar alone. */
function toCsv(value: unknown): string {
  const stringify = (rows: unknown[][]) => stringifyCsv(rows, { cast: { boolean: String } });
  const plain = (item: unknown) =>
    item === null || item === undefined ? "" : typeof item === "object" ? JSON.stringify(item) : item;
  if (isRecordList(value)) {
    const columns = columnsOf(value);
    return stringify([columns, ...value.map((row) => columns.map((column) => plain(row[column])))]);
  }
  if (Array.isArray(value)) return stringify([["value"], ...value.map((item) => [plain(item)])]);
  if (isRecord(value)) {
    return stringify([["key", "value"], ...Object.entries(value).map(([key, item]) => [key, plain(item)])]);
  }
  return stringify([[plain(value)]]);
}
