/** How the investigation pages show values: one place, so the list and the detail agree. */
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export const formatDate = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : '—');

export const formatConfidence = (confidence: number | null | undefined) => (confidence == null ? '' : ` (${Math.round(confidence * 100)}%)`);

/** 0..100 in words as well as a number, so it is not told by colour alone. */
export function severityLabel(severity: number): string {
  if (severity >= 80) return 'Critical';
  if (severity >= 60) return 'High';
  if (severity >= 30) return 'Medium';
  return 'Low';
}
