// uid → user name from the host's passwd file. Read once, and again (at most once a minute) when a
// uid it does not list turns up, so an account added while the collector runs gets its name.
// Directory services (LDAP, sssd) are not asked: a uid they alone know stays a bare number.

import { readFileSync } from 'node:fs';

const RELOAD_AFTER_MS = 60_000;
/** More accounts than any host's passwd holds; a bigger file is read only this far. */
const MAX_USERS = 100_000;

export function parsePasswd(text: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (names.size >= MAX_USERS) break;
    const [name, , uid] = line.split(':', 3);
    if (!name || name.startsWith('#') || uid === undefined || !/^\d+$/.test(uid)) continue;
    if (!names.has(Number(uid))) names.set(Number(uid), name);
  }
  return names;
}

export class UserNames {
  private names = new Map<number, string>();
  private loadedAt = -Infinity;

  constructor(private readonly passwdPath = '/etc/passwd') {}

  nameOf(uid: number): string | undefined {
    const name = this.names.get(uid);
    if (name !== undefined || Date.now() - this.loadedAt < RELOAD_AFTER_MS) return name;
    this.loadedAt = Date.now();
    try {
      this.names = parsePasswd(readFileSync(this.passwdPath, 'utf8'));
    } catch {
      // No passwd (a minimal container): uids stay numbers.
    }
    return this.names.get(uid);
  }
}
