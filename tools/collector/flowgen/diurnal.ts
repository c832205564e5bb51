// The working week in site-local time: how busy people are in each hour.
// Hour-of-week index 0 is Monday 00:00 local.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const HOURS_PER_WEEK = 168;

// Weekday presence by local hour: arrivals 7–9, a lunch dip, a tail into the evening.
const WEEKDAY = [0.05, 0.04, 0.04, 0.04, 0.04, 0.06, 0.15, 0.4, 0.8, 1.0, 1.0, 1.0, 0.8, 1.0, 1.0, 0.95, 0.9, 0.7, 0.45, 0.3, 0.22, 0.15, 0.1, 0.07];
const WEEKEND = [0.04, 0.03, 0.03, 0.03, 0.03, 0.03, 0.04, 0.05, 0.07, 0.09, 0.11, 0.12, 0.12, 0.12, 0.11, 0.1, 0.09, 0.08, 0.07, 0.06, 0.06, 0.05, 0.05, 0.04];

/** Share of the workforce active in one hour of the week (Mon 00:00 local = 0). */
export function presence(hourOfWeek: number): number {
  const day = Math.floor(hourOfWeek / 24);
  const hour = hourOfWeek % 24;
  if (day >= 5) return WEEKEND[hour];
  // Friday afternoons thin out.
  return day === 4 && hour >= 14 ? WEEKDAY[hour] * 0.85 : WEEKDAY[hour];
}

export function hourOfWeek(epochMs: number, utcOffsetMinutes: number): number {
  const local = epochMs + utcOffsetMinutes * 60_000;
  const day = Math.floor(local / DAY_MS);
  const mondayBased = (((day + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday
  const hour = Math.floor((local - day * DAY_MS) / HOUR_MS);
  return mondayBased * 24 + hour;
}

/** Start of the local hour containing epochMs, as epoch ms. */
export function hourStart(epochMs: number, utcOffsetMinutes: number): number {
  const offset = utcOffsetMinutes * 60_000;
  return Math.floor((epochMs + offset) / HOUR_MS) * HOUR_MS - offset;
}

export const MEAN_PRESENCE = (() => {
  let sum = 0;
  for (let h = 0; h < HOURS_PER_WEEK; h++) sum += presence(h);
  return sum / HOURS_PER_WEEK;
})();
