// The meter's WebAssembly module (built by ../wasm-module.ts): the flow index and payload entropy,
// each in its own part of the memory (the index's begins at ENTROPY_END). Any instance can serve
// both; the meter gives each flow table an instance for its index, and payload entropy one of its
// own, whose memory never grows.
export * from './flow-index';
export * from './payload-entropy';
