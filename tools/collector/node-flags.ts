// The Node flags the collector runs with: `npm run collector` (package.json) and the lab pass
// them, and bench:meter meters with them, as the CLI does.
//
// A young generation of 64 MiB semi-spaces from the start (Node 20 starts at 1 MiB and grows to
// 16 MiB at most, and only when much survives): the meter makes a few kilobytes of short-lived
// objects per flow record, and with small semi-spaces the flows and records of a batch outlive
// scavenges and are copied, then promoted and collected again in the old generation. On the
// bench:meter capture this cut the meter's CPU by about 35%, for about 50 MiB more RSS
// (docs/meter.md).
//
// Less inlining into one optimised function (V8's default cumulative budget is 920 bytes of
// bytecode): in a metering run of a million packets, TurboFan compiling on its helper threads was
// about a fifth of the process's CPU, most of it the record builder and the per-packet path with
// everything they call inlined, compiled again after each deoptimisation. With the budget at 250
// the first million packets took about 8% less CPU, and a warm run (the same capture metered again
// in the process) took the same time (docs/meter.md).
//
// The meter's WebAssembly (meter/wasm-module.ts) optimised as soon as it is loaded: V8 runs
// WebAssembly first from its baseline compiler and optimises a function once it has run enough,
// and on Node 20 the flow index's lookup ran baseline code through a whole metering run, at about
// twice the time per packet (a loop of a million lookups: 87–108 ms, 52–67 ms with the flag). The
// module is a few kilobytes, so compiling it all at once costs nothing measurable; first runs of
// the bench capture took about 3% less CPU (medians of 18 alternating processes).
//
// Functions optimised later, with more type feedback: an interrupt budget three times V8's 66 KiB.
// With the per-packet work in WebAssembly, the JavaScript left runs per flow (records, payload
// inspectors), and optimising it early compiled it more than once. First runs of the bench
// capture, 10 alternating processes each: −0.08 ± 0.06 s of about 1.2 s (records), −0.09 ± 0.06 s
// (the ciphertext replay), −0.09 ± 0.05 s of 1.9 s (Native rows); the whole process ran 3.5% fewer
// instructions (cachegrind, 7.08 against 6.84 G).
export const COLLECTOR_NODE_FLAGS: readonly string[] = [
  '--min-semi-space-size=64',
  '--max-semi-space-size=64',
  '--max-inlined-bytecode-size-cumulative=250',
  '--no-wasm-dynamic-tiering',
  '--interrupt-budget=202752',
];
