/** p50 and p95 (nearest rank) of a list of milliseconds. */
export type Summary = { count: number; p50: number; p95: number; mean: number };

export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(values: readonly number[]): Summary {
  const mean = values.reduce((total, value) => total + value, 0) / Math.max(1, values.length);
  return { count: values.length, p50: percentile(values, 0.5), p95: percentile(values, 0.95), mean };
}

/** Rounds for the table and the JSON: 2 significant decimals below 10, 1 below 100, whole above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const places = magnitude < 1 ? 3 : magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0;
  const factor = 10 ** places;
  return Math.round(value * factor) / factor;
}
