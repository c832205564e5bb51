// What the collector tells the service about its host in `hello` (collector-protocol.md 2.1).

import { arch as osArch, cpus, freemem, hostname, loadavg, machine, networkInterfaces, platform, release, totalmem, uptime, version } from 'node:os';
import { isIP } from 'node:net';

/** Node's platform names → the service's os names (api-spec.md, Collector). */
export function osName(p: string = platform()): string {
  return ({ linux: 'linux', darwin: 'darwin', win32: 'windows' } as Record<string, string>)[p] ?? p;
}

/** Node's arch names → the service's arch names; anything unknown is passed through. */
export function archName(a: string = osArch()): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm7' } as Record<string, string>)[a] ?? a;
}

type Interfaces = ReturnType<typeof networkInterfaces>;

/** The first non-internal IPv4 address (interfaces in the OS's order), else IPv6, else null. */
export function localIp(interfaces: Interfaces = networkInterfaces()): string | null {
  const addresses = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal);
  const v4 = addresses.find((a) => a.family === 'IPv4');
  if (v4) return v4.address;
  const v6 = addresses.find((a) => a.family === 'IPv6' && !a.address.startsWith('fe80:'));
  return v6?.address ?? null;
}

/** A public address only when the host has one on an interface; the collector asks no outside service. */
export function publicIp(interfaces: Interfaces = networkInterfaces()): string | null {
  for (const a of Object.values(interfaces).flatMap((list) => list ?? [])) {
    if (!a.internal && a.family === 'IPv4' && isPublicIpv4(a.address)) return a.address;
  }
  return null;
}

export function isPublicIpv4(ip: string): boolean {
  if (isIP(ip) !== 4) return false;
  const [a, b] = ip.split('.').map(Number);
  if (a === 10 || a === 127 || a === 0 || a >= 224) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 169 && b === 254) return false;
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  return true;
}

export function hardware(): Record<string, unknown> {
  const list = cpus();
  return {
    cpu_model: list[0]?.model?.trim() ?? null,
    cpu_count: list.length,
    cpu_mhz: list[0]?.speed ?? null,
    memory_total_bytes: totalmem(),
    memory_free_bytes: freemem(),
    machine: machine(),
    kernel: release(),
    os_version: version(),
    load_avg: loadavg().map((l) => Math.round(l * 100) / 100),
    host_uptime_s: Math.round(uptime()),
    runtime: `node ${process.version}`,
    interfaces: Object.entries(networkInterfaces()).flatMap(([name, list]) =>
      (list ?? []).filter((a) => !a.internal).map((a) => ({ name, family: a.family, address: a.address, mac: a.mac })),
    ),
  };
}

export interface HostFacts {
  hostname: string;
  os: string;
  arch: string;
  local_ip: string | null;
  public_ip: string | null;
  hardware: Record<string, unknown>;
}

export function hostFacts(name: string = hostname()): HostFacts {
  const interfaces = networkInterfaces();
  return { hostname: name, os: osName(), arch: archName(), local_ip: localIp(interfaces), public_ip: publicIp(interfaces), hardware: hardware() };
}
