// The meter's WebAssembly module (built by ../wasm-module.ts): the flow table's per-packet work
// (flow-table.ts) with the decoder, the flow index, payload entropy and the inspectors' payload
// selection it calls. Each flow table
// has an instance; its memory is laid out once (flow-table.ts's configure) and never grows.
export * from './decode';
export * from './flow-index';
export * from './flow-table';
export * from './payload-entropy';
export * from './payload-selection';
