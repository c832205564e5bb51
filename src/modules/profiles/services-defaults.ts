import { codePoints, formattingProblem, printable } from '../../infra/text.js';

/**
 * The capture configuration a collector runs with: every service block and field the SDK can send
 * (wire.md 12.4), the server's default for each, and the bounds a profile is validated against.
 *
 * A profile stores only what its creator submitted. Defaults are merged in when the configuration
 * is delivered to a node (`deliveredServices`), so changing a default here changes it for every
 * node whose profile leaves that field unset, and for nodes without a profile.
 */

/** `packet`: full-packet capture and decoding. */
export interface PacketServices {
  enabled: boolean;
  /** Interface globs matched on each node (`eth*`). An empty list delivers the default. */
  interface_patterns: string[];
  /** Deep inspection: TCP reassembly plus TLS/DNS parsing (memory-heavy). */
  inspection: boolean;
  /** Extract cleartext HTTP bodies. */
  payload: boolean;
  /** Reduced-memory mode for constrained edge devices. */
  lightweight: boolean;
  /** New node identity at every restart (Kubernetes). */
  ephemeral: boolean;
  /** Linux AF_PACKET ring buffer instead of libpcap. */
  afpacket: boolean;
  /** GRE/ERSPAN decapsulation. */
  gre: boolean;
  /** Correlate packets with OS process ids. */
  process_ids: boolean;
  /** Decoder workers; 0 = one per CPU, chosen by the collector. */
  num_workers: number;
  /** Spooler workers; 0 = chosen by the collector. */
  num_spoolers: number;
  /** Packets queued between capture and the decoders. */
  packet_buffer_length: number;
  /** AF_PACKET block size in bytes. */
  afpacket_block_size: number;
  /** AF_PACKET blocks in the ring. */
  afpacket_num_blocks: number;
  /** Longest a partly filled capture buffer waits before it is flushed, in milliseconds. */
  packet_buffer_timeout_ms: number;
  /** Spool files kept on disk while ingest is unreachable; the oldest are dropped beyond it. */
  max_spooled_files: number;
  /** Size in bytes at which a spool file is closed and a new one started. */
  max_spooled_file_size: number;
  /** Seconds between streaming batches to ingest. */
  ingest_stream_interval: number;
}

/** `netflow`: NetFlow/IPFIX listener. */
export interface NetflowServices {
  enabled: boolean;
  /** UDP port the collector listens on. */
  port: number;
}

/** `suricata_logs` and `suricata_ids`: a plain on/off switch. */
export interface ToggleService {
  enabled: boolean;
}

/** `host_logs`: host and journal logs; everything for the node's OS except `excluded_sources`. */
export interface HostLogServices {
  enabled: boolean;
  excluded_sources: string[];
}

/** What a node receives: every block, every field, never absent. */
export interface DeliveredServices {
  packet: PacketServices;
  netflow: NetflowServices;
  suricata_logs: ToggleService;
  suricata_ids: ToggleService;
  host_logs: HostLogServices;
}

export type ServiceName = keyof DeliveredServices;

/** How one field is typed, bounded and defaulted. Strings in lists are counted in code points. */
export type FieldSpec<T> = T extends boolean
  ? { kind: 'bool'; default: boolean }
  : T extends number
    ? { kind: 'int'; default: number; min: number; max: number; unit?: string }
    : { kind: 'strings'; default: string[]; maxItems: number; maxLength: number };

type Registry = { [B in ServiceName]: { [F in keyof DeliveredServices[B]]-?: FieldSpec<DeliveredServices[B][F]> } };

const bool = (value: boolean) => ({ kind: 'bool', default: value }) as const;
const int = (value: number, min: number, max: number, unit?: string) => ({ kind: 'int', default: value, min, max, unit }) as const;
const strings = (value: string[], maxItems: number, maxLength: number) => ({ kind: 'strings', default: value, maxItems, maxLength }) as const;

const MiB = 1024 * 1024;
/** Byte sizes stay below 2^31 so that a collector reading them into a 32-bit int cannot overflow. */
const INT32_MAX = 2_147_483_647;

/**
 * The one table behind validation, defaults and docs/profiles.md. The compiler insists that every
 * field of DeliveredServices has an entry here, with a default of the right type.
 */
export const serviceFields: Registry = {
  packet: {
    enabled: bool(true),
    interface_patterns: strings(['*'], 32, 128),
    inspection: bool(true),
    payload: bool(false),
    lightweight: bool(false),
    ephemeral: bool(false),
    afpacket: bool(false),
    gre: bool(false),
    process_ids: bool(true),
    num_workers: int(0, 0, 256),
    num_spoolers: int(0, 0, 256),
    packet_buffer_length: int(8192, 1, 1_048_576, 'packets'),
    afpacket_block_size: int(MiB, 4096, 128 * MiB, 'bytes'),
    afpacket_num_blocks: int(64, 1, 65_536),
    packet_buffer_timeout_ms: int(100, 1, 60_000, 'ms'),
    max_spooled_files: int(64, 1, 100_000),
    max_spooled_file_size: int(16 * MiB, 64 * 1024, INT32_MAX, 'bytes'),
    ingest_stream_interval: int(5, 1, 3600, 's'),
  },
  netflow: {
    enabled: bool(false),
    port: int(2055, 1, 65_535),
  },
  suricata_logs: { enabled: bool(false) },
  suricata_ids: { enabled: bool(false) },
  host_logs: {
    enabled: bool(false),
    excluded_sources: strings([], 64, 128),
  },
};

export const serviceNames = Object.keys(serviceFields) as ServiceName[];

type AnySpec = FieldSpec<boolean> | FieldSpec<number> | FieldSpec<string[]>;

/** The spec of `block.field`, or undefined for a name that is not in the table. */
export function fieldSpec(block: string, field: string): AnySpec | undefined {
  if (!Object.hasOwn(serviceFields, block)) return undefined;
  const fields = serviceFields[block as ServiceName] as Record<string, AnySpec>;
  return Object.hasOwn(fields, field) ? fields[field] : undefined;
}

/** What is wrong with a value: a phrase that follows its path, and a suffix for a list entry. */
export interface ValueProblem {
  /** `[2]` when one entry of a list is at fault. */
  at?: string;
  message: string;
}

/** A list of non-empty printable strings, as tags, interface patterns and excluded sources are. */
export function stringListProblem(value: unknown, maxItems: number, maxLength: number): ValueProblem | undefined {
  if (!Array.isArray(value)) return { message: 'must be an array of strings' };
  if (value.length > maxItems) return { message: `must have at most ${maxItems} entries` };
  const bad = value.findIndex((item) => typeof item !== 'string' || item.trim() === '' || codePoints(item) > maxLength || !printable(item));
  if (bad < 0) return undefined;
  const item: unknown = value[bad];
  const formatting = typeof item === 'string' ? formattingProblem(item) : undefined;
  return { at: `[${bad}]`, message: formatting ?? `must be a non-empty string of at most ${maxLength} printable characters` };
}

/** Why `value` does not fit `spec`, or undefined when it does. */
export function fieldProblem(spec: AnySpec, value: unknown): ValueProblem | undefined {
  switch (spec.kind) {
    case 'bool':
      return typeof value === 'boolean' ? undefined : { message: 'must be a boolean' };
    case 'int': {
      const shape = spec.min === 0 ? 'a non-negative integer' : 'an integer';
      if (typeof value !== 'number' || !Number.isInteger(value)) return { message: `must be ${shape}` };
      if (value < spec.min || value > spec.max) return { message: `must be ${shape} between ${spec.min} and ${spec.max}` };
      return undefined;
    }
    case 'strings':
      return stringListProblem(value, spec.maxItems, spec.maxLength);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The configuration a node runs with: the profile's stored services over the server defaults,
 * block by block and field by field. A null or absent profile gives the pure defaults. A stored
 * value that does not fit its field (a row written before a bound changed) is ignored in favour
 * of the default rather than delivered to a collector. An empty `interface_patterns` list means
 * "none chosen" (the SDK's edge preset sends `[]` then), so it delivers the default too.
 * Always returns fresh objects: callers may mutate the result.
 */
export function deliveredServices(stored: unknown): DeliveredServices {
  const source = isObject(stored) ? stored : {};
  const delivered = {} as Record<string, Record<string, unknown>>;
  for (const block of serviceNames) {
    const given = Object.hasOwn(source, block) && isObject(source[block]) ? source[block] : {};
    const out: Record<string, unknown> = {};
    for (const [field, spec] of Object.entries(serviceFields[block]) as [string, AnySpec][]) {
      const value = Object.hasOwn(given, field) ? given[field] : undefined;
      const usable = value !== undefined && fieldProblem(spec, value) === undefined;
      const chosen = usable && !(field === 'interface_patterns' && (value as string[]).length === 0) ? value : spec.default;
      out[field] = Array.isArray(chosen) ? [...chosen] : chosen;
    }
    delivered[block] = out;
  }
  return delivered as unknown as DeliveredServices;
}

/** The pure server defaults (what a node without a profile runs with). */
export const defaultServices = (): DeliveredServices => deliveredServices(undefined);
