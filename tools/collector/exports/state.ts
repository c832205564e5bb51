// What the decoder remembers per exporter (address:port): templates, data sets
// waiting for their template, sequence numbers and sampling, each keyed by
// observation domain (IPFIX) or source id (v9). Every store is bounded.

import type { ExportKind } from './record.js';

export interface FieldSpec {
  ie: number;
  pen: number;
  /** 65535: variable length (IPFIX), read from the record. */
  length: number;
}

export interface Template {
  fields: FieldSpec[];
  /** Options templates: the leading scope fields, which describe the exporter, not a flow. */
  scopeCount: number;
  /** Smallest record length, so padding at a set's end is not read as a record. */
  minLength: number;
}

/** A data set that arrived before its template, with what its message's header said (`C`). */
export interface WaitingSet<C> {
  domain: number;
  templateId: number;
  bytes: Uint8Array;
  context: C;
}

/** What one observation domain of one exporter sent, and the sequence gaps in it. */
export interface DomainCounts {
  /** What the domain's latest message was. */
  kind: ExportKind;
  messages: number;
  records: number;
  /** Messages whose sequence number was not the one expected. */
  gaps: number;
  /** Units the gaps skipped: flows (v5), packets (v9) or data records (IPFIX). */
  missing: number;
}

export interface ExportLimits {
  templatesPerExporter: number;
  /** Domains per exporter counted one by one; the decoder's totals count the rest too. */
  countedDomainsPerExporter: number;
  waitingSetsPerExporter: number;
  waitingBytesPerExporter: number;
  exporters: number;
}

export const DEFAULT_LIMITS: ExportLimits = {
  templatesPerExporter: 4096,
  countedDomainsPerExporter: 256,
  waitingSetsPerExporter: 1000,
  waitingBytesPerExporter: 1 << 20,
  exporters: 10_000,
};

const templateKey = (domain: number, id: number): number => domain * 65536 + id;

export class ExporterState<C> {
  private readonly templates = new Map<number, Template>();
  readonly waiting: WaitingSet<C>[] = [];
  private waitingBytes = 0;
  /** Next expected sequence number per domain; absent when unknown (first message, or waiting sets). */
  readonly nextSequence = new Map<number, number>();
  /** IPFIX domains whose sequence counts records after the message (see checkIpfixSequence). */
  readonly countsAfter = new Map<number, boolean>();
  /** The last IPFIX sequence number of a domain whose convention is not known yet. */
  readonly lastSequence = new Map<number, number>();
  readonly sampling = new Map<number, number>();
  readonly systemInitMs = new Map<number, number>();
  /** Per observation domain (v9 source id, v5 engine), up to countedDomainsPerExporter of them. */
  readonly domainCounts = new Map<number, DomainCounts>();

  constructor(private readonly limits: ExportLimits) {}

  /** The domain's counts; a scratch object, counted nowhere, past the bound. */
  countsOf(domain: number): DomainCounts {
    let counts = this.domainCounts.get(domain);
    if (counts) return counts;
    counts = { kind: 'ipfix', messages: 0, records: 0, gaps: 0, missing: 0 };
    if (this.domainCounts.size < this.limits.countedDomainsPerExporter) this.domainCounts.set(domain, counts);
    return counts;
  }

  template(domain: number, id: number): Template | undefined {
    return this.templates.get(templateKey(domain, id));
  }

  /** False when storing it would pass the bound: a template flood. */
  setTemplate(domain: number, id: number, template: Template): boolean {
    const key = templateKey(domain, id);
    if (!this.templates.has(key) && this.templates.size >= this.limits.templatesPerExporter) return false;
    this.templates.set(key, template);
    return true;
  }

  withdraw(domain: number, id: number): void {
    this.templates.delete(templateKey(domain, id));
  }

  withdrawAll(domain: number): void {
    for (const key of this.templates.keys()) if (Math.floor(key / 65536) === domain) this.templates.delete(key);
  }

  /** Keeps a set for later; returns how many older sets it pushed out. */
  wait(set: WaitingSet<C>): number {
    this.waiting.push(set);
    this.waitingBytes += set.bytes.length;
    let dropped = 0;
    while (this.waiting.length > this.limits.waitingSetsPerExporter || this.waitingBytes > this.limits.waitingBytesPerExporter) {
      this.waitingBytes -= this.waiting.shift()!.bytes.length;
      dropped++;
    }
    return dropped;
  }

  /** Removes and returns the waiting sets a newly known template can decode. */
  takeWaiting(domain: number, templateId: number): WaitingSet<C>[] {
    const ready: WaitingSet<C>[] = [];
    for (let i = 0; i < this.waiting.length;) {
      const w = this.waiting[i];
      if (w.domain === domain && w.templateId === templateId) {
        ready.push(w);
        this.waiting.splice(i, 1);
        this.waitingBytes -= w.bytes.length;
      } else i++;
    }
    return ready;
  }
}
