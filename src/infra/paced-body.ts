/**
 * Big response bodies (pages of flow records, up to ~60 MB) leave a slice per event-loop turn.
 * Over loopback, a client reading as fast as the server writes kept one writev of a 63 MB page in
 * the kernel for 17–30 ms, and every request behind it (token issuance) waited as long
 * (tools/bench/HISTORY.md); a megabyte takes ~1 ms. Both REST (src/http/kit.ts) and
 * GraphQL (graphql/raw-json-results.ts) write their spliced pages through this.
 */
import { Readable } from 'node:stream';

/** The most a body hands the socket in one event-loop turn. */
export const SLICE_BYTES = 1024 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The chunks, as they lie (no copy), cut where a slice ends. A write the kernel takes whole calls
 * back within the same turn (process.nextTick), so the pause after each slice is a setImmediate:
 * after the turn's other I/O.
 */
async function* slices(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  let room = SLICE_BYTES;
  for (const chunk of chunks) {
    for (let offset = 0; offset < chunk.byteLength;) {
      if (room === 0) {
        await nextTurn();
        room = SLICE_BYTES;
      }
      const piece = chunk.subarray(offset, offset + room);
      offset += piece.byteLength;
      room -= piece.byteLength;
      yield piece;
    }
  }
}

/** A stream of the chunks that yields the event loop after every SLICE_BYTES. */
export function pacedBody(chunks: readonly Uint8Array[]): Readable {
  // One piece buffered at a time: the stream must not read ahead of the socket.
  return Readable.from(slices(chunks), { objectMode: false, highWaterMark: 1 });
}
