const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in the units the explore readouts use (1 KB = 1000 B). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

export const formatNumber = (value: number | null | undefined, digits = 2) => (value == null ? '—' : Number(value.toFixed(digits)).toLocaleString());
