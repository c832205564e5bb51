// The payload inspector the flow table calls: picks the protocol by port (DNS) or by the
// payload's first bytes (TLS, SSH, HTTP), and counts what it could not read.

import type { AppHints, DecodedPacket, DropCounts, PacketHeaders, PayloadInspector } from '../packet.js';
import { inspectDns } from './dns.js';
import { inspectHttp, looksLikeHttpRequest } from './http.js';
import type { Inspection } from './inspection.js';
import { looksLikeSshBanner } from './ssh.js';
import { inspectTls, looksLikeTlsHandshake } from './tls.js';

const TCP = 6;
const UDP = 17;
const DNS_PORT = 53;
const HTTPS_PORT = 443;
const HTTP_ALPN = new Set(['h2', 'http/1.1', 'http/1.0']);
/** Most inspected payloads say nothing: one shared answer rather than an object each. */
const NOTHING: Inspection = Object.freeze({});

/**
 * Which inspector reads a payload (bytes[start, end) of a packet of that protocol and ports), or
 * undefined when none would: by port (DNS) or by the payload's first bytes.
 */
function inspectorFor(protocol: number, srcPort: number, dstPort: number, bytes: Uint8Array, start: number, end: number, fromInitiator: boolean) {
  if (end <= start) return undefined;
  if ((protocol === UDP || protocol === TCP) && (srcPort === DNS_PORT || dstPort === DNS_PORT)) return 'dns';
  if (protocol !== TCP) return undefined;
  if (looksLikeTlsHandshake(bytes, start, end)) return 'tls';
  if (looksLikeSshBanner(bytes, start, end)) return 'ssh';
  if (fromInitiator && looksLikeHttpRequest(bytes, start, end)) return 'http';
  return undefined;
}

/** Inspects one packet's payload, saying why it stopped when the bytes were cut or malformed. */
export function inspect(packet: DecodedPacket, fromInitiator: boolean): Inspection {
  const payload = packet.payload;
  switch (inspectorFor(packet.protocol, packet.srcPort ?? -1, packet.dstPort ?? -1, payload, 0, payload.length, fromInitiator)) {
    case 'dns':
      return inspectDns(payload, packet.protocol === TCP);
    case 'tls':
      return withTlsAppName(inspectTls(payload), packet, fromInitiator);
    case 'ssh':
      return { hints: { app_name: 'SSH' } };
    case 'http':
      return inspectHttp(payload);
    default:
      return NOTHING;
  }
}

/** False when inspect() would find nothing: the flow table then makes no DecodedPacket (packet.ts). */
function mayFind(h: PacketHeaders, fromInitiator: boolean): boolean {
  return inspectorFor(h.protocol, h.srcPort, h.dstPort, h.data, h.payloadStart, h.payloadEnd, fromInitiator) !== undefined;
}

/**
 * "HTTPS" on port 443 or when HTTP is the negotiated or offered ALPN protocol; otherwise "TLS",
 * said only by the ClientHello: a TLS 1.3 ServerHello hides its ALPN, so its silence must not
 * overwrite the client's "HTTPS".
 */
function withTlsAppName(inspection: Inspection, packet: DecodedPacket, fromInitiator: boolean): Inspection {
  const hints = inspection.hints;
  if (hints?.tls === undefined) return inspection;
  const https = packet.srcPort === HTTPS_PORT || packet.dstPort === HTTPS_PORT || (hints.tls.alpn ?? []).some((p) => HTTP_ALPN.has(p));
  if (https) hints.app_name = 'HTTPS';
  else if (fromInitiator) hints.app_name = 'TLS';
  return inspection;
}

/** The inspector as the flow table uses it: hints out, problems counted into `drops`. */
export function countingInspector(drops: DropCounts): PayloadInspector {
  const counting = (packet: DecodedPacket, fromInitiator: boolean): AppHints | undefined => {
    const { hints, problem } = inspect(packet, fromInitiator);
    if (problem !== undefined) drops[problem] = (drops[problem] ?? 0) + 1;
    return hints;
  };
  return Object.assign(counting, { mayFind });
}

/** The inspector without counting. */
export const inspectPayload: PayloadInspector = Object.assign((packet: DecodedPacket, fromInitiator: boolean) => inspect(packet, fromInitiator).hints, {
  mayFind,
});
