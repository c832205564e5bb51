// wire.md 11.4: the machine id the SDK derives from a CPU id, and the one this collector uses for
// its own host when none is given.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** RFC 4122 URL namespace. */
export const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

/**
 * UUIDv5 of `prophet-node:<cpuId>` in the URL namespace: SHA-1 over the 16 namespace bytes and the
 * UTF-8 name, first 16 bytes, version nibble 5, variant bits 10, lowercase 8-4-4-4-12. The id is
 * taken exactly as given (no trimming, case kept); an empty id is an error.
 */
export function deriveMachineId(cpuId: string): string {
  if (typeof cpuId !== 'string' || cpuId.length === 0) throw new Error('derive_machine_id: the CPU id must not be empty');
  const namespace = Buffer.from(URL_NAMESPACE.replaceAll('-', ''), 'hex');
  const bytes = createHash('sha1').update(namespace).update(`prophet-node:${cpuId}`, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id'];

/**
 * A stable id for this host: deriveMachineId over the contents of /etc/machine-id (the systemd
 * host id, without its trailing newline), else D-Bus's copy, else the hostname. It survives
 * reboots and reinstalls of the collector, and changes when the OS is reinstalled, as a machine
 * id should.
 */
export function hostMachineId(readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'), host: string = hostname()): string {
  for (const path of MACHINE_ID_FILES) {
    let content: string;
    try {
      content = readFile(path).trim();
    } catch {
      continue;
    }
    if (content) return deriveMachineId(content);
  }
  return deriveMachineId(host);
}
