/**
 * Control characters (C0, DEL, C1) and lone UTF-16 surrogates: never valid in a name, tag or
 * pattern; they would corrupt logs and terminals, and the console shows these values verbatim.
 */
export const unprintable = /\p{Cc}|\p{Cs}/u;

/**
 * Invisible format characters (Unicode category Cf): bidi controls (U+202A–202E, U+2066–2069,
 * U+200E/200F, U+061C) make a name display in another order than it is stored (`exe.txt` shown
 * for `txt.exe`), and zero-width ones (U+200B, U+2060–2064, U+FEFF, U+180E, U+00AD…) make two
 * different names look the same. Two kinds of Cf are writing, not tricks, and stay allowed:
 * ZWNJ/ZWJ (U+200C/U+200D) between two visible characters (Persian and Indic words, emoji
 * such as 👩‍💻), and tag characters inside an emoji flag (🏴 + tags + U+E007F, as in Scotland's).
 */
const formatCharacter = /\p{Cf}/u;
const visible = String.raw`[\p{L}\p{M}\p{N}\p{Extended_Pictographic}\p{Emoji_Modifier}]`;
const joinerInWord = new RegExp(String.raw`(?<=${visible})[\u200C\u200D](?=${visible})`, 'gu');
const emojiFlagTags = /(?<=\u{1F3F4})[\u{E0020}-\u{E007E}]+\u{E007F}/gu;

/** The first invisible format character of `value` as `U+202E`, or undefined when it has none. */
export function invisibleFormatting(value: string): string | undefined {
  if (!formatCharacter.test(value)) return undefined;
  const found = formatCharacter.exec(value.replace(emojiFlagTags, '').replace(joinerInWord, ''));
  return found ? `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : undefined;
}

/** Neither control characters, lone surrogates nor invisible format characters. */
export const printable = (value: string) => !unprintable.test(value) && !invisibleFormatting(value);

/** Code points, not UTF-16 units, so that `ü` and `☃` count as one character each. */
export const codePoints = (value: string) => [...value].length;

/** What is wrong with text on account of an invisible format character, as a phrase following the field's name. */
export function formattingProblem(value: string): string | undefined {
  const found = invisibleFormatting(value);
  return found && `must not contain invisible formatting characters (found ${found})`;
}

/**
 * What is wrong with a trimmed, non-empty display name or label (profiles, deployments, automation
 * rules, nodes' hostnames and descriptions, a device's host facts), as a phrase that follows the
 * field's name; undefined when nothing is.
 */
export function nameProblem(name: string, maxLength: number): string | undefined {
  if (codePoints(name) > maxLength) return `must be at most ${maxLength} characters`;
  if (unprintable.test(name)) return 'must not contain control characters';
  return formattingProblem(name);
}
