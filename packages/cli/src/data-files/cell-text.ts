/** A typed value from JSON, Excel or parquet as the text the CSV typing reads back. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "bigint" || typeof value === "boolean") return String(value);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return "";
    const iso = value.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? String(item) : item));
}
