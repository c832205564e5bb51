import { DomainError } from '../../errors.js';

/** How large a batch's body may be on the wire (gzipped or not), and once decompressed. */
export const MAX_WIRE_BYTES = 16 * 1024 * 1024;
export const MAX_JSON_BYTES = 64 * 1024 * 1024;

/** Records a batch may carry, in either format. */
export const MAX_FLOWS_PER_BATCH = 10_000;

export const batchTooLarge = () => new DomainError(413, 'batch_too_large', `A batch carries at most ${MAX_FLOWS_PER_BATCH} flows`);
