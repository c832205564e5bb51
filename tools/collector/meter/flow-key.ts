// Which flow a packet belongs to, and who started it. Both directions of a conversation share
// one key: (protocol, VLAN, the two address:port ends in a fixed order), which the flow index
// writes (wasm/flow-index.ts). ICMP has no ports: echo requests and replies between two hosts
// share one flow; any other message is keyed by its type and code. The packet carries no echo
// identifier, so concurrent pings between the same two hosts are one flow.

import { formatAddress } from './address.js';
import type { FlowIdentity } from './flow-state.js';
import { isPrivateAt } from './well-known.js';

// The identity words of a flow's slot (IDENTITY in wasm/flow-table.ts): both ends' addresses
// (initiator first, 4 words each), then these.
const SRC_PORT = 8;
const DST_PORT = 9;
const PROTOCOL = 10;
const VLAN = 11;
const ICMP_TYPE = 12;
const ICMP_CODE = 13;
const IP_VERSION = 14;
const FLIPPED = 15;
const KEY_HASH = 16;
const SESSION_HASH = 17;

/**
 * Who the flow is between, from its first packet. The initiator (src) is that packet's sender,
 * except when the packet shows it is an answer:
 * - a TCP SYN-ACK: its receiver sent the SYN;
 * - an ICMP echo reply: its receiver sent the request;
 * - when the start was not seen (TCP without SYN, UDP and the rest): a packet from a server-like
 *   port (below 1024 or a known service port) to one that is not comes from the server.
 * wasm/flow-table.ts applies these rules (answersFirst) when it opens the flow, and writes its
 * identity at `at` in `words` (its slot), with the record's key and session hashes
 * (wasm/identity-hash.ts). The addresses become text here, once per flow.
 */
export function identityOf(words: Uint32Array, at: number): FlowIdentity {
  const ipVersion = words[at + IP_VERSION] === 6 ? 6 : 4;
  const protocol = words[at + PROTOCOL];
  const id: FlowIdentity = {
    protocol,
    ipVersion,
    srcIp: formatAddress(words, at, ipVersion),
    srcPort: words[at + SRC_PORT],
    dstIp: formatAddress(words, at + 4, ipVersion),
    dstPort: words[at + DST_PORT],
    srcPrivate: isPrivateAt(words, at, ipVersion),
    dstPrivate: isPrivateAt(words, at + 4, ipVersion),
    flipped: words[at + FLIPPED] !== 0,
    keyHash: words[at + KEY_HASH],
    sessionHash: words[at + SESSION_HASH],
  };
  // ICMP has no ports: the record carries type·256 + code as dst.port, as NetFlow exporters do.
  const icmpType = words[at + ICMP_TYPE] | 0;
  if (icmpType >= 0) id.icmp = { type: icmpType, code: words[at + ICMP_CODE] | 0 };
  const vlan = words[at + VLAN] | 0;
  if (vlan >= 0) id.vlan = vlan;
  return id;
}
