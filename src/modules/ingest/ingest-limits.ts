/** How large a batch's body may be on the wire (gzipped or not), and once decompressed. */
export const MAX_WIRE_BYTES = 16 * 1024 * 1024;
export const MAX_JSON_BYTES = 64 * 1024 * 1024;
