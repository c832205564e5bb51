// The Node flags the collector runs with: `npm run collector` (package.json) and the lab pass
// them, and bench:meter meters with them, as the CLI does.
//
// A young generation of 64 MiB semi-spaces (Node 20 grows it to 16 MiB at most): the meter makes
// a few kilobytes of objects per flow record, and with small semi-spaces the records of a batch
// outlive several scavenges and are copied each time. It cut the meter's CPU by 10–25% on the
// bench:meter capture, for about 40 MiB more RSS (docs/meter.md).
export const COLLECTOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
