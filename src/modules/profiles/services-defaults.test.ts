import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateCreateProfile } from './profile-input.js';
import { defaultServices, deliveredServices, fieldProblem, serviceFields, serviceNames } from './services-defaults.js';

describe('server defaults', () => {
  it('cover every block and field of wire.md 12.4', () => {
    expect(Object.keys(serviceFields)).toEqual(['packet', 'netflow', 'suricata_logs', 'suricata_ids', 'host_logs']);
    expect(Object.keys(serviceFields.packet)).toHaveLength(18);
    expect(Object.keys(serviceFields.netflow)).toEqual(['enabled', 'port']);
    expect(Object.keys(serviceFields.host_logs)).toEqual(['enabled', 'excluded_sources']);
  });

  it('pass their own validation', () => {
    for (const block of serviceNames) {
      for (const [field, spec] of Object.entries(serviceFields[block])) {
        expect(fieldProblem(spec, spec.default), `${block}.${field}`).toBeUndefined();
      }
    }
  });

  it('are the ones docs/profiles.md lists, with the same bounds', () => {
    const doc = readFileSync(new URL('../../../docs/profiles.md', import.meta.url), 'utf8');
    for (const block of serviceNames) {
      const section = doc.split(`#### \`${block}\``)[1]?.split('####')[0] ?? '';
      const rows = section.split('\n').filter((line) => line.startsWith('| `'));
      expect(rows, block).toHaveLength(Object.keys(serviceFields[block]).length);
      for (const [field, spec] of Object.entries(serviceFields[block])) {
        const type = spec.kind === 'bool' ? 'bool' : spec.kind === 'int' ? 'int' : 'string[]';
        const accepted =
          spec.kind === 'bool'
            ? 'true, false'
            : spec.kind === 'int'
              ? `${spec.min}–${spec.max}${spec.unit ? ` ${spec.unit}` : ''}`
              : `≤ ${spec.maxItems} entries, each 1–${spec.maxLength} chars`;
        expect(rows, `${block}.${field}`).toContain(`| \`${field}\` | ${type} | \`${JSON.stringify(spec.default)}\` | ${accepted} |`);
      }
    }
  });

  it('are what a node without a profile runs with', () => {
    const defaults = defaultServices();
    expect(defaults.packet).toMatchObject({ enabled: true, interface_patterns: ['*'], inspection: true, payload: false, lightweight: false });
    expect(defaults.netflow).toEqual({ enabled: false, port: 2055 });
    expect(defaults.suricata_logs).toEqual({ enabled: false });
    expect(defaults.suricata_ids).toEqual({ enabled: false });
    expect(defaults.host_logs).toEqual({ enabled: false, excluded_sources: [] });
  });
});

describe('deliveredServices', () => {
  it.each([null, undefined, {}, 'packet', 42, [], [{ packet: {} }]])('gives the pure defaults for %j', (stored) => {
    expect(deliveredServices(stored)).toEqual(defaultServices());
  });

  it('merges field by field within a block and leaves other blocks at their defaults', () => {
    const delivered = deliveredServices({ packet: { lightweight: true, num_workers: 1 }, host_logs: { enabled: true } });
    const expected = defaultServices();
    expected.packet.lightweight = true;
    expected.packet.num_workers = 1;
    expected.host_logs.enabled = true;
    expect(delivered).toEqual(expected);
  });

  it("delivers the SDK's lightweight preset over the defaults", () => {
    const preset = {
      packet: { enabled: true, interface_patterns: ['eth*'], inspection: false, payload: false, lightweight: true, process_ids: false, num_workers: 1 },
    };
    expect(deliveredServices(preset).packet).toEqual({ ...defaultServices().packet, ...preset.packet });
  });

  it('replaces lists rather than concatenating them, and treats an empty interface list as unset', () => {
    expect(deliveredServices({ packet: { interface_patterns: ['eth0', 'eth1'] } }).packet.interface_patterns).toEqual(['eth0', 'eth1']);
    expect(deliveredServices({ packet: { interface_patterns: [] } }).packet.interface_patterns).toEqual(['*']);
    expect(deliveredServices({ host_logs: { excluded_sources: ['auth'] } }).host_logs.excluded_sources).toEqual(['auth']);
  });

  it('keeps an explicit false or zero', () => {
    const delivered = deliveredServices({ packet: { enabled: false, num_workers: 0 }, netflow: { enabled: false } });
    expect(delivered.packet.enabled).toBe(false);
    expect(delivered.packet.num_workers).toBe(0);
  });

  it('ignores unknown blocks and fields, and stored values that do not fit their field', () => {
    const delivered = deliveredServices({
      bogus: { enabled: true },
      packet: { enabled: 'yes', num_workers: -3, gre: null, extra: 1, toString: 5 },
      netflow: 'on',
      suricata_ids: { enabled: true },
    });
    const expected = defaultServices();
    expected.suricata_ids.enabled = true;
    expect(delivered).toEqual(expected);
    expect(delivered).not.toHaveProperty('bogus');
  });

  it('returns fresh objects every time', () => {
    const first = deliveredServices({ host_logs: { excluded_sources: ['auth'] } });
    first.packet.interface_patterns.push('mutated');
    first.host_logs.excluded_sources.push('mutated');
    expect(defaultServices().packet.interface_patterns).toEqual(['*']);
    expect(deliveredServices({ host_logs: { excluded_sources: ['auth'] } }).host_logs.excluded_sources).toEqual(['auth']);
  });
});

describe('validateCreateProfile', () => {
  it('returns services exactly as submitted, with no defaults filled in', () => {
    const services = { packet: { num_workers: 2 }, netflow: {} };
    const valid = validateCreateProfile({ name: 'n', services });
    expect(valid.services).toBe(services);
    expect(valid).toEqual({
      name: 'n',
      description: null,
      services,
      tags: [],
      updateChannel: 'stable',
      fleetStaging: false,
      autoUpdate: true,
      customerId: null,
    });
  });

  it('checks types even when called without GraphQL in front', () => {
    const input = { name: 'n', tags: 'x', updateChannel: 3, fleetStaging: 'no', autoUpdate: 1, customerId: 5, description: 7 } as never;
    expect(() => validateCreateProfile(input)).toThrow(
      'description must be a string or null; tags must be an array of strings; update_channel must be one of stable, dev, pinned; fleet_staging must be a boolean; auto_update must be a boolean; customer_id must be a string',
    );
    expect(() => validateCreateProfile({ name: 5 } as never)).toThrow('name must be a string');
  });
});
