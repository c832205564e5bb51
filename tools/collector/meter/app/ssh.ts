// SSH identification strings (RFC 4253 §4.2): "SSH-2.0-softwareversion", or "SSH-1.99-" from a
// server that also speaks protocol 1. Either side sends one first, in the clear.

import { startsWithAscii } from './inspection.js';

export function looksLikeSshBanner(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
  return startsWithAscii(bytes, 'SSH-2.0-', start, end) || startsWithAscii(bytes, 'SSH-1.99-', start, end);
}
