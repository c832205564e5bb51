// The payload inspector the flow table calls: picks the protocol by port (DNS) or by the
// payload's first bytes (TLS, SSH, HTTP), and counts what it could not read.

import type { DecodedPacket, DropCounts, PayloadInspector } from '../packet.js';
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

/** Inspects one packet's payload, saying why it stopped when the bytes were cut or malformed. */
export function inspect(packet: DecodedPacket, fromInitiator: boolean): Inspection {
  const payload = packet.payload;
  if (payload.length === 0) return NOTHING;
  if ((packet.protocol === UDP || packet.protocol === TCP) && (packet.srcPort === DNS_PORT || packet.dstPort === DNS_PORT)) {
    return inspectDns(payload, packet.protocol === TCP);
  }
  if (packet.protocol !== TCP) return NOTHING;
  if (looksLikeTlsHandshake(payload)) return withTlsAppName(inspectTls(payload), packet, fromInitiator);
  if (looksLikeSshBanner(payload)) return { hints: { app_name: 'SSH' } };
  if (fromInitiator && looksLikeHttpRequest(payload)) return inspectHttp(payload);
  return NOTHING;
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
  return (packet, fromInitiator) => {
    const { hints, problem } = inspect(packet, fromInitiator);
    if (problem !== undefined) drops[problem] = (drops[problem] ?? 0) + 1;
    return hints;
  };
}

/** The inspector without counting. */
export const inspectPayload: PayloadInspector = (packet, fromInitiator) => inspect(packet, fromInitiator).hints;
