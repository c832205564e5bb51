/**
 * A file of own networks for the admin CLI's `networks import` (docs/networks.md): CSV
 * (`cidr,name,kind`, a header line of those words allowed, a name with commas or quotes in double
 * quotes) or JSON lines (`{"cidr": …, "name": …, "kind": …}`). Blank lines and lines starting with
 * `#` are skipped; every error names its line.
 */
import { badRequest } from '../../errors.js';
import type { OwnNetworkInput } from './networks.service.js';

/** Larger than any list the per-tenant limit admits (1000 lines of long names). */
export const MAX_FILE_BYTES = 1024 * 1024;

export interface NetworkFile {
  networks: OwnNetworkInput[];
  /** The line (1-based) of each network. */
  lines: number[];
}

const fileError = (line: number, message: string) => badRequest('invalid_file', `line ${line}: ${message}`);

/** `format` from the file name when it ends in .csv, .jsonl or .ndjson; else from the first entry. */
export function parseNetworkFile(text: string, fileName: string): NetworkFile {
  if (Buffer.byteLength(text) > MAX_FILE_BYTES) throw badRequest('invalid_file', `the file is larger than ${MAX_FILE_BYTES} bytes`);
  const entries = text
    .split(/\r?\n/)
    .map((content, i) => ({ content: content.trim(), line: i + 1 }))
    .filter((e) => e.content !== '' && !e.content.startsWith('#'));
  const json = /\.(jsonl|ndjson)$/i.test(fileName) || (!/\.csv$/i.test(fileName) && entries[0]?.content.startsWith('{'));
  const networks: OwnNetworkInput[] = [];
  const lines: number[] = [];
  for (const { content, line } of entries) {
    if (!json && /^cidr\s*,\s*name\s*,\s*kind$/i.test(content)) continue;
    networks.push(json ? jsonEntry(content, line) : csvEntry(content, line));
    lines.push(line);
  }
  return { networks, lines };
}

function jsonEntry(content: string, line: number): OwnNetworkInput {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw fileError(line, 'is not a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fileError(line, 'is not a JSON object');
  const { cidr, name, kind } = value as Record<string, unknown>;
  return { cidr, name, kind };
}

/** `cidr,name,kind`, the name in double quotes when it holds a comma (`""` is a quote). */
function csvEntry(content: string, line: number): OwnNetworkInput {
  const m = /^([^,"]*),\s*("(?:[^"]|"")*"|[^,"]*),([^,"]*)$/.exec(content);
  if (!m) throw fileError(line, 'is not `cidr,name,kind` (quote a name that holds a comma: "Acme, Inc.")');
  const quoted = m[2]!.trim();
  const name = quoted.startsWith('"') ? quoted.slice(1, -1).replace(/""/g, '"') : quoted;
  return { cidr: m[1]!.trim(), name, kind: m[3]!.trim() };
}
