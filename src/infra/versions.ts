/**
 * SemVer 2.0.0 precedence (semver.org §11): build metadata (`+…`) is ignored, and a pre-release
 * sorts below its release (collector releases, the IP dataset package). Lenient with what nodes
 * report: a leading `v` is dropped, and missing or non-numeric core parts count as 0, so `1.2`
 * equals `1.2.0`.
 */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  for (let i = 0; i < Math.max(x.core.length, y.core.length); i++) {
    const d = (x.core[i] ?? 0) - (y.core[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return comparePreReleases(x.preRelease, y.preRelease);
}

export const isBehind = (current: string | null, latest: string | null): boolean => current !== null && latest !== null && compareVersions(current, latest) < 0;

function parseVersion(version: string): { core: number[]; preRelease: string[] } {
  const withoutBuild = version.trim().replace(/^v/i, '').split('+', 1)[0];
  // The first hyphen only: pre-release identifiers may contain hyphens themselves (`1.0.0-x-y`).
  const hyphen = withoutBuild.indexOf('-');
  const core = hyphen === -1 ? withoutBuild : withoutBuild.slice(0, hyphen);
  return {
    core: core.split('.').map((part) => Number.parseInt(part, 10) || 0),
    preRelease: hyphen === -1 ? [] : withoutBuild.slice(hyphen + 1).split('.'),
  };
}

/** Identifier by identifier; when one list is a prefix of the other, the shorter is lower. */
function comparePreReleases(x: string[], y: string[]): number {
  // No identifiers is the release itself, above all of its pre-releases.
  if (x.length === 0 || y.length === 0) return Math.sign(y.length - x.length);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = compareIdentifiers(x[i], y[i]);
    if (d !== 0) return d;
  }
  return Math.sign(x.length - y.length);
}

const numeric = /^\d+$/;

/** Numbers by value (BigInt: identifiers may exceed 2^53), numbers below words, words in ASCII order. */
function compareIdentifiers(a: string, b: string): number {
  const aNumeric = numeric.test(a);
  const bNumeric = numeric.test(b);
  if (aNumeric && bNumeric) return BigInt(a) === BigInt(b) ? 0 : BigInt(a) < BigInt(b) ? -1 : 1;
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
