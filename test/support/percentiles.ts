/**
 * The `p`th percentile of `values` by nearest rank (p 50: the lower median of an even count), NaN
 * where none is a number; a NaN (a run that measured nothing) is left out.
 */
export function percentile(values: number[], p: number): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The median of `values`: their 50th percentile. */
export const median = (values: number[]): number => percentile(values, 50);
