/** The middle value of the samples (of an even count, the upper of the two middle ones). */
export function median(samples: readonly number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}
