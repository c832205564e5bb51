// Receives NetFlow v5/v9 and IPFIX datagrams on one UDP socket and hands each
// decoded record on; the sender's address and port key its exporter state.
// Diagnostics: datagrams received, records, drops by reason, template waits and
// withdrawals, sequence gaps overall and per exporter and observation domain.

import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { type DecoderOptions, type DomainDiagnostics, ExportDecoder, type SequenceCounts, type TemplateCounts } from './decode.js';
import type { ExportRecord } from './record.js';
import type { DropCounts } from '../meter/packet.js';

export interface ExportDiagnostics {
  datagrams: number;
  records: number;
  waitingSets: number;
  drops: DropCounts;
  sequence: SequenceCounts;
  templates: TemplateCounts;
  /** The domains with the most gaps first, at most 100. */
  domains: DomainDiagnostics[];
}

export class ExportListener {
  private readonly decoder: ExportDecoder;
  private socket: dgram.Socket | undefined;
  private datagrams = 0;
  private records = 0;

  constructor(
    options: DecoderOptions,
    private readonly onRecord: (record: ExportRecord) => void,
  ) {
    this.decoder = new ExportDecoder(options);
  }

  /** Binds `host`:`port` (0 picks a free port) and returns the bound port. */
  async listen(host: string, port: number): Promise<number> {
    const socket = dgram.createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    socket.on('message', (datagram, from) => {
      this.datagrams++;
      for (const record of this.decoder.decode(datagram, from.address, from.port)) {
        this.records++;
        this.onRecord(record);
      }
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    this.socket = socket;
    return socket.address().port;
  }

  diagnostics(): ExportDiagnostics {
    return {
      datagrams: this.datagrams,
      records: this.records,
      waitingSets: this.decoder.waitingSets(),
      drops: { ...this.decoder.drops },
      sequence: { ...this.decoder.sequence },
      templates: { ...this.decoder.templates },
      domains: this.decoder.domains(),
    };
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((r) => socket.close(() => r()));
  }
}
