import { badRequest } from '../errors.js';

/**
 * A mistake in how the admin CLI was called (a missing or malformed option): the CLI prints it as
 * plain text followed by the command's usage, and exits 2.
 */
export const usageError = (problem: string, usage: string) => badRequest('usage', `${problem}\nusage:\n${usage}`);
