/** C0 controls and DEL, and lone UTF-16 surrogates: never valid in a name, tag or pattern. */
export const unprintable = /[\u0000-\u001f\u007f]|\p{Cs}/u;

/** Code points, not UTF-16 units, so that `ü` and `☃` count as one character each. */
export const codePoints = (value: string) => [...value].length;

/**
 * What is wrong with a trimmed, non-empty display name (profiles, deployments), as a phrase that
 * follows the field's name; undefined when nothing is.
 */
export function nameProblem(name: string, maxLength: number): string | undefined {
  if (codePoints(name) > maxLength) return `must be at most ${maxLength} characters`;
  if (unprintable.test(name)) return 'must not contain control characters';
  return undefined;
}
