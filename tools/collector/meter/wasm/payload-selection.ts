// Which payloads the inspectors read (../payload-selection.ts says the rules, and JavaScript
// writes them here): a payload on one of their ports, or a TCP payload that starts with one of
// their prefixes. A payload none of them reads is still counted against its direction's
// inspections, as before, but is not shown: JavaScript is not called to be told nothing.
//
// Memory at SELECTION: u32 "show every payload" (no rules: an inspector did not say what it
// reads), u32 the number of prefixes, a bit per byte that starts one (most payloads start with
// none: the prefixes are not read for them), the port map (a bit per port), then the prefixes, each
// PREFIX_BYTES: u8 its length, u8 the payload's least length, u8 1 when only the initiator's
// payloads count, u8 unused, then its bytes.

export const MAX_PREFIXES: u32 = 32;
export const MAX_PREFIX_LENGTH: u32 = 16;
export const PREFIX_BYTES: usize = 4 + <usize>MAX_PREFIX_LENGTH;
const PORT_MAP_BYTES: usize = 65536 / 8;
export const FIRST_BYTES: usize = 8;
export const PORT_MAP: usize = FIRST_BYTES + 32;
export const PREFIXES: usize = PORT_MAP + PORT_MAP_BYTES;
export const SELECTION_BYTES: usize = PREFIXES + <usize>MAX_PREFIXES * PREFIX_BYTES;
const TCP: u32 = 6;
const UDP: u32 = 17;

export let SELECTION: usize = 0;

/** Places the rules at `at`; returns where they end. */
export function placeSelection(at: usize): usize {
  SELECTION = at;
  return at + SELECTION_BYTES;
}

/** No rules, once the memory is there: every payload is shown until JavaScript writes some. */
export function showEveryPayload(): void {
  memory.fill(SELECTION, 0, SELECTION_BYTES);
  store<u32>(SELECTION, 1);
}

/** Whether an inspector reads the payload memory[start, end) of a packet with these ports (hasPorts false: none). */
export function selects(protocol: u32, hasPorts: bool, srcPort: u32, dstPort: u32, start: usize, end: usize, fromInitiator: bool): bool {
  if (load<u32>(SELECTION) != 0) return true;
  if (end <= start) return false;
  if ((protocol == TCP || protocol == UDP) && hasPorts && (onPort(srcPort) || onPort(dstPort))) return true;
  if (protocol != TCP) return false;
  const first = <u32>load<u8>(start);
  if ((load<u8>(SELECTION + FIRST_BYTES + (first >>> 3)) & (1 << (first & 7))) == 0) return false;
  const length = end - start;
  const count = load<u32>(SELECTION + 4);
  for (let i: u32 = 0; i < count; i++) {
    const prefix = SELECTION + PREFIXES + <usize>i * PREFIX_BYTES;
    const n = <usize>load<u8>(prefix);
    if (length < n || length < <usize>load<u8>(prefix, 1)) continue;
    if (load<u8>(prefix, 2) != 0 && !fromInitiator) continue;
    let k: usize = 0;
    while (k < n && load<u8>(start + k) == load<u8>(prefix + 4 + k)) k++;
    if (k == n) return true;
  }
  return false;
}

function onPort(port: u32): bool {
  return (load<u8>(SELECTION + PORT_MAP + ((<usize>port) >>> 3)) & (1 << (port & 7))) != 0;
}
