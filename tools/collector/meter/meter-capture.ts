// Capture files → flow records: each file read in chunks, its frames decoded, the packets fed to
// one flow table (time is the packets' own, so the records carry the capture's timestamps), and
// the records handed to a sink in batches. The sink's push waits while the ingest queue is full,
// so memory stays bounded by one chunk, one batch and the table's active flows.

import { open } from 'node:fs/promises';
import type { FlowSink } from '../flows.js';
import { CaptureReader, type PcapFormat } from './capture.js';
import type { FlowState } from './flow-state.js';
import { FlowTable, type FlowTableOptions } from './flow-table.js';
import type { DropCounts, FrameSpan } from './packet.js';

const CHUNK_BYTES = 1 << 20;
/** Enough of a file to see its header and first record. */
const PROBE_BYTES = 64 * 1024;

export interface MeterStats {
  files: number;
  /** Frames the capture reader handed over. */
  packets_read: number;
  /** Frames decoded down to their transport header. */
  packets_decoded: number;
  /** What each stage could not use, by reason: capture (records, files), decode and flow_table (packets). */
  dropped: { capture: DropCounts; decode: DropCounts; flow_table: DropCounts };
  /** Flow records handed to the sink. */
  flows_emitted: number;
  /** Flows in the table now (0 once the run is done). */
  active_flows: number;
  /** The newest packet time seen (epoch ms). */
  last_packet_time: number | null;
}

/** Why a file cannot be metered: it is missing, unreadable or not a pcap/pcapng capture. */
export class CaptureFileError extends Error {
  override readonly name = 'CaptureFileError';
}

/** Throws CaptureFileError, naming the file, unless it starts as a pcap or pcapng capture. */
export async function checkCaptureFile(path: string): Promise<void> {
  let head: Uint8Array;
  try {
    const file = await open(path, 'r');
    try {
      const buffer = new Uint8Array(PROBE_BYTES);
      const { bytesRead } = await file.read(buffer, 0, PROBE_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new CaptureFileError(`cannot read capture file ${path}: ${reason}`);
  }
  if (head.length === 0) throw new CaptureFileError(`capture file ${path} is empty`);
  const reader = new CaptureReader();
  reader.push(head);
  // Damage after the header (an impossible record length) is the run's to count, not a refusal.
  const reason = reader.stoppedReason;
  if (reason === 'unknown_file_format' || reason === 'bad_section_header') throw new CaptureFileError(`${path} is not a pcap or pcapng capture (${reason})`);
}

export interface MeterOptions extends FlowTableOptions {
  /** Records per sink push. */
  batchFlows: number;
}

/** Meters capture files in order through one flow table. */
export class CaptureMeter {
  private readonly table: FlowTable;
  /** Shared by every reader of the run (files, or live interfaces). */
  readonly captureDrops: DropCounts = {};
  private readonly decodeDrops: DropCounts = {};
  private readonly counts = { files: 0, flows_emitted: 0 };
  /** Flows whose records are due; the records are built as the batch goes to the sink. */
  private batch: FlowState[] = [];
  /**
   * Every chunk is metered from this one buffer, the flow table's WebAssembly memory, where frames
   * are decoded in place: a file's are read into it, a stream's copied in. A stream's new megabyte
   * per chunk cost more CPU (allocation, page faults, collection) than the reads. The reader keeps
   * no view of a chunk past read() (a cut record's bytes are copied), so the next chunk may
   * overwrite it.
   */
  private readonly chunk: Uint8Array;

  constructor(
    private readonly options: MeterOptions,
    private readonly sink: FlowSink,
  ) {
    this.table = new FlowTable({ ...options, frameBytes: CHUNK_BYTES });
    this.chunk = this.table.frames;
  }

  stats(): MeterStats {
    const table = this.table.stats();
    const read = this.table.readCounts();
    return {
      files: this.counts.files,
      packets_read: read.frames,
      packets_decoded: table.packets,
      dropped: { capture: { ...this.captureDrops }, decode: { ...this.decodeDrops }, flow_table: table.dropped },
      flows_emitted: this.counts.flows_emitted,
      active_flows: table.active,
      last_packet_time: read.lastPacketMicros === null ? null : Math.floor(read.lastPacketMicros / 1000),
    };
  }

  /**
   * Meters every file, then hands over the flows still open. When the signal aborts, reading stops
   * but the flows seen so far are still handed over (the sink then queues without waiting).
   */
  async run(paths: readonly string[], signal: AbortSignal): Promise<void> {
    for (const path of paths) {
      if (signal.aborted) break;
      await this.meterFile(path, signal);
    }
    await this.finish(signal);
  }

  private async meterFile(path: string, signal: AbortSignal): Promise<void> {
    this.counts.files++;
    const reader = new CaptureReader(this.captureDrops);
    const file = await open(path, 'r');
    try {
      for (;;) {
        const { bytesRead } = await file.read(this.chunk, 0, CHUNK_BYTES, null);
        if (bytesRead === 0) break;
        this.meterChunk(reader, this.chunk.subarray(0, bytesRead));
        await this.sendWhenFull(signal);
        if (signal.aborted || reader.stoppedReason !== undefined) break;
      }
    } finally {
      await file.close();
    }
    // A file left early (stopped) is not a cut file.
    if (!signal.aborted) reader.end();
  }

  /** Meters a chunk of a capture's bytes; the records due by their packets' times wait for a send. */
  meterChunk(reader: CaptureReader, chunk: Uint8Array): void {
    if (chunk.buffer === this.chunk.buffer) {
      this.table.meterIn(chunk);
      reader.read(chunk, this.meterFrame, this.meterPcapRecords);
      return;
    }
    // A stream's chunk (live capture): copied into the meter's buffer, a megabyte at a time.
    for (let at = 0; at < chunk.length; at += CHUNK_BYTES) {
      const part = chunk.subarray(at, at + CHUNK_BYTES);
      this.chunk.set(part);
      const copy = this.chunk.subarray(0, part.length);
      this.table.meterIn(copy);
      reader.read(copy, this.meterFrame, this.meterPcapRecords);
    }
  }

  /** One frame through the table; a field, so read() gets the same function every chunk. */
  private readonly meterFrame = (frame: FrameSpan): void => {
    if (this.table.meterFrame(frame, this.decodeDrops)) this.append(this.table.takeEnded());
  };

  /** Whole pcap records of the chunk through the table where they lie (most of a pcap file's frames). */
  private readonly meterPcapRecords = (bytes: Uint8Array, at: number, until: number, format: PcapFormat): number => {
    const stopped = this.table.meterPcapRecords(bytes, at, until, format, this.decodeDrops);
    this.append(this.table.takeEnded());
    return stopped;
  };

  /** Takes the records due by `nowMicros`: a live capture's clock runs on when no packet comes. */
  expire(nowMicros: number): void {
    this.append(this.table.advanceEnded(nowMicros));
  }

  /** Hands every flow still open over: the end of the input. */
  async finish(signal: AbortSignal): Promise<void> {
    this.append(this.table.flushEnded());
    await this.send(signal);
  }

  /** Sends once a batch is full; until then records wait, so ingest gets whole batches. */
  async sendWhenFull(signal: AbortSignal): Promise<void> {
    if (this.batch.length >= this.options.batchFlows) await this.send(signal);
  }

  /** One by one: an idle sweep can hand over more records than a call's arguments may hold. */
  private append(ended: readonly FlowState[]): void {
    // Most packets end no flow: skip the loop (iterating the table's frozen empty array allocates).
    if (ended.length === 0) return;
    for (const flow of ended) this.batch.push(flow);
  }

  /**
   * Hands the flows waiting to the sink (which waits while ingest is full, unless aborted): as
   * Native blocks of at most batchFlows rows when the sink sends those (a chunk of packets can end
   * more flows than a batch holds), else as records.
   */
  async send(signal: AbortSignal): Promise<void> {
    const ended = this.batch;
    this.batch = [];
    if (ended.length === 0) return;
    this.counts.flows_emitted += ended.length;
    // Records go in one push (the sink batches them); blocks are the batches.
    const native = this.sink.pushNative;
    const rows = native === undefined ? ended.length : Math.max(1, this.options.batchFlows);
    for (let i = 0; i < ended.length; i += rows) {
      const flows = ended.slice(i, i + rows);
      const block = native === undefined ? undefined : this.table.blockOf(flows);
      if (block !== undefined) await native!(block, flows.length, signal);
      else
        await this.sink.push(
          flows.map((flow) => this.table.recordOf(flow)),
          signal,
        );
    }
  }
}
