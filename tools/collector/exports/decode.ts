// Decodes NetFlow v5, NetFlow v9 and IPFIX datagrams into flow records. Pure
// apart from the per-exporter state the protocols need (templates, sequence
// numbers, sampling); never throws on hostile bytes: what it cannot use is
// counted in `drops` by reason.

import type { DropCounts } from '../meter/packet.js';
import { applyField, emptyFields, readUint, type FlowFields } from './fields.js';
import { readV5Header, readV5Record } from './netflow5.js';
import { buildExportRecord, type ExportKind, type ExportRecord, type Exporter, type RecordTimes } from './record.js';
import { DEFAULT_LIMITS, type DomainCounts, ExporterState, type ExportLimits, type Template } from './state.js';
import { countDrop, parseTemplateSet, VARIABLE_LENGTH } from './templates.js';

const UPTIME_WRAP = 4294967296;

export interface SequenceCounts {
  /** Messages whose sequence number was not the one expected. */
  gaps: number;
  /** Units the gaps skipped: flows (v5), packets (v9) or data records (IPFIX). */
  missing: number;
}

/** Template handling over all exporters. */
export interface TemplateCounts {
  /** Data sets that arrived before their template and were held (decoded later, or pushed out: `unknown_template`). */
  waits: number;
  /** Templates withdrawn by IPFIX withdrawal messages (one per message that withdraws all of a kind). */
  withdrawn: number;
}

/** One exporter's observation domain, for diagnostics. */
export interface DomainDiagnostics extends DomainCounts {
  /** The sender, address:port. */
  exporter: string;
  domain: number;
}

export interface DecoderOptions {
  customerId: string;
  limits?: Partial<ExportLimits>;
}

/** The header facts a data set needs to place its records in time. */
interface MessageContext {
  kind: ExportKind;
  exporter: Exporter;
  exportMs: number;
  /** v9 only: the exporter's uptime when it sent the message. */
  uptimeMs: number | undefined;
}

type State = ExporterState<MessageContext>;

export class ExportDecoder {
  readonly drops: DropCounts = {};
  readonly sequence: SequenceCounts = { gaps: 0, missing: 0 };
  readonly templates: TemplateCounts = { waits: 0, withdrawn: 0 };
  private readonly exporters = new Map<string, State>();
  private readonly limits: ExportLimits;
  private readonly customerId: string;

  constructor(options: DecoderOptions) {
    this.customerId = options.customerId;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /** Data sets held until their template arrives, over all exporters. */
  waitingSets(): number {
    let n = 0;
    for (const state of this.exporters.values()) n += state.waiting.length;
    return n;
  }

  /**
   * Per exporter and domain, those with the most gaps first, at most `max` (an exporter may
   * spread over thousands of domains; the totals are in `sequence`).
   */
  domains(max = 100): DomainDiagnostics[] {
    const all: DomainDiagnostics[] = [];
    for (const [exporter, state] of this.exporters) {
      for (const [domain, counts] of state.domainCounts) all.push({ exporter, domain, ...counts });
    }
    return all.sort((a, b) => b.gaps - a.gaps || b.records - a.records).slice(0, max);
  }

  /** Counts a message of `kind` for its domain. */
  private countMessage(state: State, domain: number, kind: ExportKind): void {
    const counts = state.countsOf(domain);
    counts.messages++;
    counts.kind = kind;
  }

  /** The records of one datagram from `address`:`port` (plus any earlier sets its templates unlock). */
  decode(datagram: Uint8Array, address: string, port: number): ExportRecord[] {
    const out: ExportRecord[] = [];
    if (datagram.length < 4) {
      countDrop(this.drops, 'truncated_header');
      return out;
    }
    const version = readUint(datagram, 0, 2);
    if (version !== 5 && version !== 9 && version !== 10) {
      countDrop(this.drops, 'bad_version');
      return out;
    }
    const state = this.stateOf(`${address}:${port}`);
    if (!state) return out;
    if (version === 5) this.decodeV5(datagram, address, port, state, out);
    else this.decodeSets(datagram, version === 10, address, port, state, out);
    return out;
  }

  private stateOf(key: string): State | undefined {
    let state = this.exporters.get(key);
    if (state) return state;
    if (this.exporters.size >= this.limits.exporters) {
      countDrop(this.drops, 'too_many_exporters');
      return undefined;
    }
    state = new ExporterState<MessageContext>(this.limits);
    this.exporters.set(key, state);
    return state;
  }

  /** `start` numbers this message's first unit (undefined: unknown); `next` is the next message's, if known. */
  private checkSequence(state: State, domain: number, start: number | undefined, next: number | undefined): void {
    const expected = state.nextSequence.get(domain);
    if (expected !== undefined && start !== undefined && expected !== start) {
      const counts = state.countsOf(domain);
      this.sequence.gaps++;
      counts.gaps++;
      const skipped = (start - expected + UPTIME_WRAP) % UPTIME_WRAP;
      // A number behind the expected one is a reordered or restarted stream, not a loss.
      if (skipped < UPTIME_WRAP / 2) {
        this.sequence.missing += skipped;
        counts.missing += skipped;
      }
    }
    if (next === undefined) state.nextSequence.delete(domain);
    else state.nextSequence.set(domain, next % UPTIME_WRAP);
  }

  private decodeV5(b: Uint8Array, address: string, port: number, state: State, out: ExportRecord[]): void {
    const header = readV5Header(b);
    if (typeof header === 'string') return countDrop(this.drops, header);
    this.countMessage(state, header.engine, 'netflow_v5');
    this.checkSequence(state, header.engine, header.sequence, header.sequence + header.count);
    const ctx: MessageContext = {
      kind: 'netflow_v5',
      exporter: { address, port, domain: header.engine },
      exportMs: header.exportMs,
      uptimeMs: header.sysUptimeMs,
    };
    for (let i = 0; i < header.count; i++) this.emit(readV5Record(b, i), ctx, state, header.samplingInterval, out);
  }

  /** NetFlow v9 and IPFIX share their set framing: (id, length) then the body. */
  private decodeSets(b: Uint8Array, ipfix: boolean, address: string, port: number, state: State, out: ExportRecord[]): void {
    const headerLength = ipfix ? 16 : 20;
    if (b.length < headerLength) return countDrop(this.drops, 'truncated_header');
    let end = b.length;
    if (ipfix) {
      const length = readUint(b, 2, 2);
      if (length < headerLength || length > b.length) return countDrop(this.drops, 'bad_message_length');
      end = length;
    }
    const domain = readUint(b, ipfix ? 12 : 16, 4);
    const sequence = readUint(b, ipfix ? 8 : 12, 4);
    const ctx: MessageContext = {
      kind: ipfix ? 'ipfix' : 'netflow_v9',
      exporter: { address, port, domain },
      exportMs: readUint(b, ipfix ? 4 : 8, 4) * 1000,
      uptimeMs: ipfix ? undefined : readUint(b, 4, 4),
    };
    this.countMessage(state, domain, ctx.kind);
    const templateSet = ipfix ? 2 : 0;
    const optionsSet = ipfix ? 3 : 1;
    let flowRecords = 0;
    let optionRecords = 0;
    let waited = false;
    const learned: number[] = [];
    let off = headerLength;
    while (off + 4 <= end) {
      const id = readUint(b, off, 2);
      const length = readUint(b, off + 2, 2);
      if (length < 4 || off + length > end) {
        countDrop(this.drops, 'bad_set_length');
        break;
      }
      const body = off + 4;
      const setEnd = off + length;
      if (id === templateSet || id === optionsSet) {
        for (const t of parseTemplateSet(b, body, setEnd, ipfix, id === optionsSet, this.drops)) {
          if (this.learnTemplate(state, domain, t.id, t.template)) learned.push(t.id);
        }
      } else if (id >= 256) {
        const template = state.template(domain, id);
        if (!template) {
          waited = true;
          this.templates.waits++;
          const pushedOut = state.wait({ domain, templateId: id, bytes: b.slice(body, setEnd), context: ctx });
          if (pushedOut > 0) countDrop(this.drops, 'unknown_template', pushedOut);
        } else if (template.scopeCount > 0) optionRecords += this.decodeData(b, body, setEnd, template, ctx, state, out);
        else flowRecords += this.decodeData(b, body, setEnd, template, ctx, state, out);
      } else countDrop(this.drops, 'reserved_set_id');
      off = setEnd;
    }
    // Sets that waited for these templates are decoded after the whole message, whose options
    // records (the exporter's boot time) they may need.
    for (const id of learned) {
      const template = state.template(domain, id);
      if (template) for (const w of state.takeWaiting(domain, id)) this.decodeData(w.bytes, 0, w.bytes.length, template, w.context, state, out);
    }
    if (!ipfix)
      this.checkSequence(state, domain, sequence, sequence + 1); // v9 numbers packets
    else if (waited)
      this.checkSequence(state, domain, undefined, undefined); // record count unknowable
    else this.checkIpfixSequence(state, domain, sequence, flowRecords, optionRecords);
  }

  /**
   * IPFIX numbers data records: RFC 7011 gives the count before this message.
   * softflowd 1.1.0 gives the count after it, of flow records only. Which one
   * a domain uses shows in its first message (softflowd's: its own flow
   * records, not 0) or, when the stream is joined midway, in the first two
   * (this number minus this message's flow records is the previous number).
   */
  private checkIpfixSequence(state: State, domain: number, sequence: number, flowRecords: number, optionRecords: number): void {
    const before = sequence;
    const after = (sequence - flowRecords + UPTIME_WRAP) % UPTIME_WRAP;
    let countsAfter = state.countsAfter.get(domain);
    if (countsAfter === undefined) {
      const previous = state.lastSequence.get(domain);
      state.lastSequence.set(domain, sequence);
      if (sequence !== 0 && after === 0) countsAfter = true;
      else if (previous !== undefined) countsAfter = after === previous;
      else if (sequence === 0) countsAfter = false;
      if (countsAfter === undefined) return this.checkSequence(state, domain, undefined, before + flowRecords + optionRecords);
      state.countsAfter.set(domain, countsAfter);
      // Learnt from this very pair of numbers: nothing to check them against.
      if (countsAfter && previous !== undefined) return this.checkSequence(state, domain, undefined, sequence);
    }
    if (countsAfter) this.checkSequence(state, domain, after, sequence);
    else this.checkSequence(state, domain, before, before + flowRecords + optionRecords);
  }

  /** Stores or withdraws a template; true when one was stored. */
  private learnTemplate(state: State, domain: number, id: number, template: Template): boolean {
    if (template.fields.length === 0) {
      this.templates.withdrawn++;
      if (id === 2 || id === 3) state.withdrawAll(domain);
      else state.withdraw(domain, id);
      return false;
    }
    if (state.setTemplate(domain, id, template)) return true;
    countDrop(this.drops, 'template_flood');
    return false;
  }

  /** The records of one data set body [off, end); returns how many it held. */
  private decodeData(b: Uint8Array, off: number, end: number, template: Template, ctx: MessageContext, state: State, out: ExportRecord[]): number {
    let count = 0;
    const domain = ctx.exporter.domain;
    while (end - off >= template.minLength) {
      const f = emptyFields();
      let ok = true;
      for (const field of template.fields) {
        let length = field.length;
        if (length === VARIABLE_LENGTH) {
          if (off >= end) {
            ok = false;
            break;
          }
          length = b[off++];
          if (length === 255) {
            if (off + 2 > end) {
              ok = false;
              break;
            }
            length = readUint(b, off, 2);
            off += 2;
          }
        }
        if (off + length > end || !applyField(f, field.ie, field.pen, b, off, length)) {
          ok = false;
          break;
        }
        off += length;
      }
      if (!ok) {
        countDrop(this.drops, 'bad_field_length');
        break;
      }
      count++;
      if (template.scopeCount > 0) this.learnOptions(f, state, domain);
      else this.emit(f, ctx, state, state.sampling.get(domain) ?? 1, out);
    }
    // Padding follows records; a set too short for even one record is not padding.
    if (count === 0 && end > off) countDrop(this.drops, 'short_data_set');
    return count;
  }

  /**
   * Options records describe the exporter: its sampling and boot time. PSAMP
   * (RFC 5476) selects samplingPacketInterval packets, then skips
   * samplingPacketSpace: one packet in (interval + space) / interval.
   */
  private learnOptions(f: FlowFields, state: State, domain: number): void {
    const interval = f.samplingInterval;
    if (interval !== undefined && interval > 0) state.sampling.set(domain, f.samplingSpace === undefined ? interval : (interval + f.samplingSpace) / interval);
    if (f.systemInitMs !== undefined) state.systemInitMs.set(domain, f.systemInitMs);
  }

  private emit(f: FlowFields, ctx: MessageContext, state: State, sampling: number, out: ExportRecord[]): void {
    // v5 has no options records: its boot time is in the header (ctx.uptimeMs).
    const times = timesOf(f, ctx, state.systemInitMs.get(ctx.exporter.domain));
    if (!times) return countDrop(this.drops, 'no_flow_time');
    const record = buildExportRecord(f, ctx.kind, ctx.exporter, times, sampling, this.customerId);
    if (!record) return countDrop(this.drops, 'no_addresses');
    out.push(record);
    state.countsOf(ctx.exporter.domain).records++;
  }
}

/**
 * Absolute times when the record has them; otherwise uptime-relative ones
 * placed by the boot time (v5/v9: header time minus header uptime; IPFIX:
 * systemInitTimeMilliseconds from an options record). An uptime that would
 * place the flow after its export (by more than the header's one-second
 * resolution) has wrapped past 2^32 ms; softflowd's IPFIX also writes
 * negative offsets this way. A record with no time at all starts and ends at
 * its export time.
 */
function timesOf(f: FlowFields, ctx: MessageContext, systemInitMs: number | undefined): RecordTimes | undefined {
  if (f.startMs !== undefined) return { startMs: f.startMs, endMs: f.endMs ?? f.startMs, exportMs: ctx.exportMs };
  if (f.startUptimeMs === undefined) return { startMs: ctx.exportMs, endMs: ctx.exportMs, exportMs: ctx.exportMs };
  const boot = ctx.uptimeMs !== undefined ? ctx.exportMs - ctx.uptimeMs : systemInitMs;
  if (boot === undefined) return undefined;
  return {
    startMs: placeUptime(boot, f.startUptimeMs, ctx.exportMs),
    endMs: placeUptime(boot, f.endUptimeMs ?? f.startUptimeMs, ctx.exportMs),
    exportMs: ctx.exportMs,
  };
}

/** An uptime placed by the boot time, unwrapped when it would fall more than a second after the export. */
function placeUptime(boot: number, uptime: number, exportMs: number): number {
  return boot + uptime > exportMs + 1000 ? boot + uptime - UPTIME_WRAP : boot + uptime;
}
