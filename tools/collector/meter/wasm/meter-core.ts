// The meter's WebAssembly module (built by ../wasm-module.ts): the flow index and payload entropy,
// each in its own part of the memory (the index's begins at ENTROPY_END). Any instance can serve
// both; each flow table has an instance for its index, and payload entropy has instances of its
// own (a meter's, holding its frames, or one shared), whose memory never grows once made.
export * from './flow-index';
export * from './payload-entropy';
