// What a TCP connection's segments say beyond their counts: retransmissions (a segment whose
// sequence range that direction already sent), the handshake's round trip, and the end
// (FIN from both sides and the last ACK, or a RST). Sequence numbers wrap at 2^32.

import { TcpFlag, type PacketHeaders } from './packet.js';

/** `open`, then `closing` after both FINs or a RST (linger for stragglers), `closed` once the last FIN is acknowledged. */
export type TcpPhase = 'open' | 'closing' | 'closed';

/** Where the tracker reports what a segment taught; the flow's counters for its current record. */
export interface TcpObservations {
  retransPackets: number;
  retransBytes: number;
  /** Handshake round trip seen at the sensor (SYN → SYN-ACK → ACK), in microseconds, or -1. */
  handshakeRttMicros: number;
}

/** a ≤ b in sequence space (RFC 1982 serial arithmetic). */
const seqAtMost = (a: number, b: number): boolean => ((a - b) | 0) <= 0;

/**
 * Sequence numbers are uint32 and often above 2^31, where V8 keeps a number as a double: the
 * fields that hold them start as NaN ("none yet"), a double, so the first large one does not
 * change the tracker's layout and deoptimise the code that reads it.
 */
const NONE = NaN;
const isNone = Number.isNaN;

export class TcpTracker {
  phase: TcpPhase = 'open';
  /** End (seq + length) of the highest segment each direction sent; NONE before its first. */
  private srcEnd = NONE;
  private dstEnd = NONE;
  private synMicros = -1;
  private synAckMicros = -1;
  private rttMeasured = false;
  private srcFinEnd = NONE;
  private dstFinEnd = NONE;
  /** The sequence the last ACK must acknowledge, and who must send it. */
  private finalAck = NONE;
  private finalAckFromSrc = false;

  observe(p: PacketHeaders, fromSrc: boolean, out: TcpObservations): void {
    const flags = p.tcpFlags;
    const syn = (flags & TcpFlag.SYN) !== 0;
    const fin = (flags & TcpFlag.FIN) !== 0;
    const ack = (flags & TcpFlag.ACK) !== 0;
    // SYN and FIN each take one sequence number; a pure ACK takes none and is never a retransmission.
    const length = p.payloadLength + (syn ? 1 : 0) + (fin ? 1 : 0);
    const end = (p.tcpSeq + length) >>> 0;
    const highest = fromSrc ? this.srcEnd : this.dstEnd;
    if (length > 0 && !isNone(highest) && seqAtMost(end, highest)) {
      out.retransPackets++;
      out.retransBytes += p.ipLength;
    } else if (length > 0 || isNone(highest)) {
      if (fromSrc) this.srcEnd = end;
      else this.dstEnd = end;
    }

    this.handshake(p.tsMicros, fromSrc, syn, ack, out);

    if ((flags & TcpFlag.RST) !== 0) {
      if (this.phase === 'open') this.phase = 'closing';
      return;
    }
    if (fin) {
      if (fromSrc && isNone(this.srcFinEnd)) this.srcFinEnd = end;
      if (!fromSrc && isNone(this.dstFinEnd)) this.dstFinEnd = end;
      if (this.phase === 'open' && !isNone(this.srcFinEnd) && !isNone(this.dstFinEnd)) {
        this.phase = 'closing';
        this.finalAck = end;
        this.finalAckFromSrc = !fromSrc;
      }
      return;
    }
    if (this.phase === 'closing' && !isNone(this.finalAck) && ack && fromSrc === this.finalAckFromSrc && p.tcpAck === this.finalAck) {
      this.phase = 'closed';
    }
  }

  private handshake(ts: number, fromSrc: boolean, syn: boolean, ack: boolean, out: TcpObservations): void {
    if (syn && !ack && fromSrc) {
      // The last SYN before the answer: a retried SYN would add the retry timeout to the RTT.
      if (this.synAckMicros === -1) this.synMicros = ts;
    } else if (syn && ack && !fromSrc) {
      if (this.synMicros !== -1 && this.synAckMicros === -1) this.synAckMicros = ts;
    } else if (!syn && ack && fromSrc && this.synAckMicros !== -1 && !this.rttMeasured) {
      out.handshakeRttMicros = ts - this.synMicros;
      this.rttMeasured = true;
    }
  }
}

/** A SYN without ACK: the first segment of a connection. */
export function isConnectionStart(p: PacketHeaders): boolean {
  return p.hasTcp && (p.tcpFlags & (TcpFlag.SYN | TcpFlag.ACK)) === TcpFlag.SYN;
}
