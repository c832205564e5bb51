// Builds the meter's WebAssembly for the current sources (wasm-module.ts), so that the first
// metering run after an install does not: npm's postinstall runs it (tools/postinstall.sh).
import { relative } from 'node:path';
import { ensureMeterWasm } from './wasm-module.js';

console.log(`meter WebAssembly: ${relative(process.cwd(), ensureMeterWasm())}`);
