/**
 * Control characters (C0, DEL, C1) and lone UTF-16 surrogates: never valid in a name, tag or
 * pattern; they would corrupt logs and terminals, and the console shows these values verbatim.
 */
export const unprintable = /\p{Cc}|\p{Cs}/u;

/** Code points, not UTF-16 units, so that `ü` and `☃` count as one character each. */
export const codePoints = (value: string) => [...value].length;

/**
 * What is wrong with a trimmed, non-empty display name or label (profiles, deployments, automation
 * rules, a device's host facts), as a phrase that follows the field's name; undefined when nothing is.
 */
export function nameProblem(name: string, maxLength: number): string | undefined {
  if (codePoints(name) > maxLength) return `must be at most ${maxLength} characters`;
  if (unprintable.test(name)) return 'must not contain control characters';
  return undefined;
}
