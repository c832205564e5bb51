/**
 * The buffer's memory to transfer to another thread, when the buffer owns all of it (else it is
 * copied, which is fine for a small one: small Buffers share Node's pool).
 */
export function transferable(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
}
