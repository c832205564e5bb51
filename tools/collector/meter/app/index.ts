// The payload inspector the flow table calls: picks the protocol by port (DNS) or by the
// payload's first bytes (TLS, SSH, HTTP), and counts what it could not read.

import type { DropCounts, InspectedPacket, PayloadInspector } from '../packet.js';
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
export function inspect(h: InspectedPacket, fromInitiator: boolean): Inspection {
  const srcPort = h.hasPorts ? h.srcPort : -1;
  const dstPort = h.hasPorts ? h.dstPort : -1;
  // Most payloads shown (a server's data, a datagram of an unknown protocol) stop here, before
  // a view of their bytes is made.
  switch (inspectorFor(h.protocol, srcPort, dstPort, h.data, h.payloadStart, h.payloadEnd, fromInitiator)) {
    case 'dns':
      return inspectDns(payloadOf(h), h.protocol === TCP);
    case 'tls':
      return withTlsAppName(inspectTls(payloadOf(h)), srcPort, dstPort, fromInitiator);
    case 'ssh':
      return { hints: { app_name: 'SSH' } };
    case 'http':
      return inspectHttp(payloadOf(h));
    default:
      return NOTHING;
  }
}

/** The captured payload as a plain view of the frame's bytes (a Buffer's subarray costs more). */
function payloadOf(h: InspectedPacket): Uint8Array {
  return new Uint8Array(h.data.buffer, h.data.byteOffset + h.payloadStart, h.payloadEnd - h.payloadStart);
}

/**
 * "HTTPS" on port 443 or when HTTP is the negotiated or offered ALPN protocol; otherwise "TLS",
 * said only by the ClientHello: a TLS 1.3 ServerHello hides its ALPN, so its silence must not
 * overwrite the client's "HTTPS".
 */
function withTlsAppName(inspection: Inspection, srcPort: number, dstPort: number, fromInitiator: boolean): Inspection {
  const hints = inspection.hints;
  if (hints?.tls === undefined) return inspection;
  const https = srcPort === HTTPS_PORT || dstPort === HTTPS_PORT || (hints.tls.alpn ?? []).some((p) => HTTP_ALPN.has(p));
  if (https) hints.app_name = 'HTTPS';
  else if (fromInitiator) hints.app_name = 'TLS';
  return inspection;
}

/** The inspector as the flow table uses it: hints out, problems counted into `drops`. */
export function countingInspector(drops: DropCounts): PayloadInspector {
  return (headers, fromInitiator) => {
    const { hints, problem } = inspect(headers, fromInitiator);
    if (problem !== undefined) drops[problem] = (drops[problem] ?? 0) + 1;
    return hints;
  };
}

/** The inspector without counting. */
export const inspectPayload: PayloadInspector = (headers, fromInitiator) => inspect(headers, fromInitiator).hints;
