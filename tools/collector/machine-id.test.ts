import { describe, expect, it } from 'vitest';
import { deriveMachineId, hostMachineId } from './machine-id.js';

describe('deriveMachineId (wire.md 11.4)', () => {
  it.each([
    ['0xABC', 'bc43bcea-37a7-5c97-9815-727fba52b452'],
    ['0x1122334455667788', '8f28106d-b8d9-554d-90c4-59a57dc94169'],
    ['0xCAFE', '110cf4e1-aa0d-57f2-9cb9-e3f2739b1e04'],
  ])('%s → %s', (cpuId, expected) => {
    expect(deriveMachineId(cpuId)).toBe(expected);
  });

  it('keeps case and whitespace: the id is used exactly as given', () => {
    expect(deriveMachineId('0xabc')).not.toBe(deriveMachineId('0xABC'));
    expect(deriveMachineId(' 0xABC')).not.toBe(deriveMachineId('0xABC'));
  });

  it('refuses an empty id', () => {
    expect(() => deriveMachineId('')).toThrow(/empty/);
  });

  it('is a version 5, RFC 4122 variant UUID', () => {
    expect(deriveMachineId('anything')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('hostMachineId', () => {
  it('derives from /etc/machine-id without its newline', () => {
    const read = (path: string) => {
      if (path === '/etc/machine-id') return '3d1219c7c4c5404aaa1f6d2a48adfda4\n';
      throw new Error('ENOENT');
    };
    expect(hostMachineId(read, 'host-a')).toBe(deriveMachineId('3d1219c7c4c5404aaa1f6d2a48adfda4'));
  });

  it('falls back to D-Bus’s copy, then to the hostname', () => {
    const dbusOnly = (path: string) => {
      if (path === '/var/lib/dbus/machine-id') return 'abc123\n';
      throw new Error('ENOENT');
    };
    expect(hostMachineId(dbusOnly, 'host-a')).toBe(deriveMachineId('abc123'));
    const none = () => {
      throw new Error('ENOENT');
    };
    expect(hostMachineId(none, 'host-a')).toBe(deriveMachineId('host-a'));
    expect(hostMachineId(() => '\n', 'host-b')).toBe(deriveMachineId('host-b'));
  });
});
