// SSH identification strings (RFC 4253 §4.2): "SSH-2.0-softwareversion", or "SSH-1.99-" from a
// server that also speaks protocol 1. Either side sends one first, in the clear.

const BANNERS = ['SSH-2.0-', 'SSH-1.99-'];

export function looksLikeSshBanner(payload: Uint8Array): boolean {
  const start = Buffer.from(payload.buffer, payload.byteOffset, Math.min(payload.length, 9)).toString('latin1');
  return BANNERS.some((b) => start.startsWith(b));
}
