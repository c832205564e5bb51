// The payload inspector the flow table calls: picks the protocol by port (DNS) or by the
// payload's first bytes (TLS, SSH, HTTP), and counts what it could not read.

import type { DropCounts, InspectedPacket, PayloadInspector, PayloadSelection } from '../packet.js';
import { PayloadRules, unionOf } from '../payload-selection.js';
import { DNS_PAYLOADS, inspectDns } from './dns.js';
import { HTTP_REQUESTS, inspectHttp } from './http.js';
import type { Inspection } from './inspection.js';
import { SSH_PAYLOADS } from './ssh.js';
import { inspectTls, TLS_PAYLOADS } from './tls.js';

const TCP = 6;
const HTTPS_PORT = 443;
const HTTP_ALPN = new Set(['h2', 'http/1.1', 'http/1.0']);
/** Most inspected payloads say nothing: one shared answer rather than an object each. */
const NOTHING: Inspection = Object.freeze({});

type Protocol = 'dns' | 'tls' | 'ssh' | 'http';
/** What each protocol's inspector reads, in the order they are tried: DNS by port, the others by their first bytes. */
const READS: ReadonlyArray<[Protocol, PayloadSelection]> = [
  ['dns', DNS_PAYLOADS],
  ['tls', TLS_PAYLOADS],
  ['ssh', SSH_PAYLOADS],
  ['http', HTTP_REQUESTS],
];
const RULES = READS.map(([protocol, selection]) => [protocol, new PayloadRules(selection)] as const);

/** Which inspector reads the payload, or undefined when none would. */
function inspectorFor(h: InspectedPacket, fromInitiator: boolean): Protocol | undefined {
  for (const [protocol, rules] of RULES) if (rules.reads(h, fromInitiator)) return protocol;
  return undefined;
}

/** Inspects one packet's payload, saying why it stopped when the bytes were cut or malformed. */
export function inspect(h: InspectedPacket, fromInitiator: boolean): Inspection {
  const srcPort = h.hasPorts ? h.srcPort : -1;
  const dstPort = h.hasPorts ? h.dstPort : -1;
  // A payload no inspector reads (a server's data, a datagram of an unknown protocol) stops here,
  // before a view of its bytes is made; the flow table shows none of those (PayloadInspector.reads).
  switch (inspectorFor(h, fromInitiator)) {
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

/** The inspectors' payloads together: what the flow table shows them. */
const READ_BY_ALL = unionOf(READS.map(([, reads]) => reads));

/** The inspector as the flow table uses it: hints out, problems counted into `drops`. */
export function countingInspector(drops: DropCounts): PayloadInspector {
  const inspector: PayloadInspector = (headers, fromInitiator) => {
    const { hints, problem } = inspect(headers, fromInitiator);
    if (problem !== undefined) drops[problem] = (drops[problem] ?? 0) + 1;
    return hints;
  };
  inspector.reads = READ_BY_ALL;
  return inspector;
}

/** The inspector without counting. */
export const inspectPayload: PayloadInspector = Object.assign((headers: InspectedPacket, fromInitiator: boolean) => inspect(headers, fromInitiator).hints, {
  reads: READ_BY_ALL,
});
