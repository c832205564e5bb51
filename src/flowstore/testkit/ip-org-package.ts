import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A directory laid out like @ip-location-db/asn with a few ranges. */
export function fakePackage(root: string, version: string, google: string): string {
  const dir = join(root, `pkg-${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@ip-location-db/asn', version, license: 'CC-BY-4.0' }));
  // 8.8.8.0/24 (Google), 1.0.0.1–1.0.0.6 (odd range), 9.9.9.9 (blank name → AS19281)
  writeFileSync(join(dir, 'asn-ipv4-num.csv'), `134744064,134744319,15169,${google}\n16777217,16777222,13335,"Cloudflare, Inc."\n151587081,151587081,19281,\n`);
  writeFileSync(join(dir, 'asn-ipv6-num.csv'), `${0x20014860n << 96n},${(0x20014860n << 96n) + (1n << 96n) - 1n},15169,${google}\n`);
  return dir;
}
