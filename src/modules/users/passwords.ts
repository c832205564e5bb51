import { hash, verify } from '@node-rs/argon2';
import { badRequest } from '../../errors.js';

/**
 * argon2id with OWASP's first recommended setting (19 MiB, 2 passes, 1 lane): about 12 ms on one
 * core, so a sign-in costs little, and guessing offline from a stolen table costs as much per try.
 * The parameters are stored in each PHC string: raising them later leaves old hashes verifiable.
 */
const ARGON2ID = { algorithm: 2 /* Algorithm.Argon2id: a const enum, not importable here */, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
/** Longer passwords are refused before hashing: hashing megabytes would be a denial of service. */
const MAX_PASSWORD_LENGTH = 256;

/** A password fit to be set: 12 to 256 characters (NIST 800-63B: length, no composition rules). */
export function checkNewPassword(password: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    throw badRequest('invalid_request', `A password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`, { field: 'password' });
  }
}

export const hashPassword = (password: string): Promise<string> => hash(password, ARGON2ID);

// Verified against when the email names nobody, so that an unknown address takes as long as a wrong password.
const decoy = hashPassword('decoy password that matches nothing');

/** Whether `password` matches `stored`; with no stored hash, a decoy is verified so the answer takes as long. */
export async function passwordMatches(password: string, stored: string | null | undefined): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH * 4) return false;
  const matches = await verify(stored ?? (await decoy), password).catch(() => false);
  return Boolean(stored) && matches;
}
