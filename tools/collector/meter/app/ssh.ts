// SSH identification strings (RFC 4253 §4.2): "SSH-2.0-softwareversion", or "SSH-1.99-" from a
// server that also speaks protocol 1. Either side sends one first, in the clear.

import type { PayloadSelection } from '../packet.js';
import { asciiPrefix } from '../payload-selection.js';

export const SSH_PAYLOADS: PayloadSelection = { ports: [], prefixes: [asciiPrefix('SSH-2.0-'), asciiPrefix('SSH-1.99-')] };
