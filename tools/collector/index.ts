// The reference collector as a library: what tests and benchmarks run in-process.

export { startCollector, type CollectorOptions, type CollectorStats, type RunningCollector } from './collector.js';
export { enroll, EnrollError, type Enrolled, type EnrollOptions, type DeviceStart } from './enroll.js';
export { deriveMachineId, hostMachineId } from './machine-id.js';
export { createLogger, LogRing, type Logger, type LogLevel } from './logring.js';
export { StateDir, defaultStateDir, type StoredState } from './state.js';
export { TokenSource, CredentialRejected, splitAccessKey } from './auth.js';
export { IngestQueue, INGEST_PATH, type IngestStats } from './ingest.js';
export { ControlChannel, CONTROL_PATH, type Welcome } from './control.js';
export { parseCli, resolveRun, main, USAGE, UsageError } from './cli.js';
export { COLLECTOR_VERSION } from './version.js';
