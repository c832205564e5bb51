/**
 * A start the machine's state prevents (the port taken, the data directory held by another
 * process): main prints its one-line message, no stack trace, and exits 1.
 */
export class StartError extends Error {}
