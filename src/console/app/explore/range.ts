/** The time ranges the explore and search pages offer, kept in the query string as `range`. */
export const RANGES = {
  '15m': { label: 'Last 15 minutes', value: 15, unit: 'minutes', interval: '30s' },
  '1h': { label: 'Last hour', value: 1, unit: 'hours', interval: '1m' },
  '1d': { label: 'Last 24 hours', value: 1, unit: 'days', interval: '30m' },
  '7d': { label: 'Last 7 days', value: 7, unit: 'days', interval: '3h' },
  '30d': { label: 'Last 30 days', value: 30, unit: 'days', interval: '12h' },
} as const;

export type RangeKey = keyof typeof RANGES;

export const readRange = (params: URLSearchParams, fallback: RangeKey): RangeKey => {
  const asked = params.get('range');
  return asked && asked in RANGES ? (asked as RangeKey) : fallback;
};

/** The range as the API's relative time filter (`{relative: {value, unit}}`), ending now. */
export const relativeStart = (key: RangeKey) => ({ relative: { value: RANGES[key].value, unit: RANGES[key].unit } });
