import { describe, expect, it } from 'vitest';
import { compareVersions, isBehind } from './versions.js';

describe('compareVersions (SemVer 2.0.0 precedence)', () => {
  // semver.org §11, lowest first.
  const specOrder = [
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '2.0.0',
    '2.1.0',
    '2.1.1',
  ];

  it('sorts the specification example in its order', () => {
    expect([...specOrder].reverse().sort(compareVersions)).toEqual(specOrder);
    for (let i = 1; i < specOrder.length; i++) {
      expect(compareVersions(specOrder[i - 1], specOrder[i]), `${specOrder[i - 1]} < ${specOrder[i]}`).toBe(-1);
      expect(compareVersions(specOrder[i], specOrder[i - 1]), `${specOrder[i]} > ${specOrder[i - 1]}`).toBe(1);
    }
  });

  it.each([
    ['1.2.0+build.5', '1.2.0'],
    ['1.2.0+build.5', '1.2.0+build.6'],
    ['1.0.0-beta+exp.sha.5114f85', '1.0.0-beta'],
    ['v1.2.0', '1.2.0'],
    ['1.2', '1.2.0'],
  ])('%s has the precedence of %s', (a, b) => {
    expect(compareVersions(a, b)).toBe(0);
    expect(compareVersions(b, a)).toBe(0);
  });

  it.each([
    ['1.2.0-rc.9', '1.2.0-rc.10'],
    ['1.2.0-rc.10', '1.2.0'],
    ['1.2.0-rc.1+build.9', '1.2.0+build.1'],
    ['1.0.0-1', '1.0.0-a'],
    ['1.0.0-x-y', '1.0.0-x-z'],
    ['1.0.0-alpha.99999999999999999998', '1.0.0-alpha.99999999999999999999'],
    ['1.9.0', '1.10.0'],
  ])('%s < %s', (lower, higher) => {
    expect(compareVersions(lower, higher)).toBe(-1);
    expect(compareVersions(higher, lower)).toBe(1);
  });
});

describe('isBehind', () => {
  it('does not offer a release that differs only in build metadata', () => {
    expect(isBehind('1.2.0', '1.2.0+build.5')).toBe(false);
    expect(isBehind('1.2.0+build.4', '1.2.0+build.5')).toBe(false);
  });

  it('offers a release over its pre-releases, and a later pre-release', () => {
    expect(isBehind('1.2.0-rc.9', '1.2.0')).toBe(true);
    expect(isBehind('1.2.0-rc.9', '1.2.0-rc.10')).toBe(true);
    expect(isBehind('1.2.0-rc.10', '1.2.0-rc.9')).toBe(false);
  });

  it('needs both versions', () => {
    expect(isBehind(null, '1.2.0')).toBe(false);
    expect(isBehind('1.2.0', null)).toBe(false);
  });
});
