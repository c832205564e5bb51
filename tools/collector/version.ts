/**
 * The version this build of the reference collector reports in `hello.collector_version`, unless
 * an `update` command installed another one (then the state dir remembers that one: state.ts).
 */
export const COLLECTOR_VERSION = '0.1.0';
