/**
 * Query parameters as a ClickHouse server reads them: `param_<name>` carries the value in
 * ClickHouse's escaped text format, and the `{name:Type}` placeholder in the query says how to
 * read it. chDB's binder takes JavaScript values instead (strings verbatim, arrays as arrays), so
 * this module turns the HTTP text back into the value it stands for.
 */

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', r: '\r', n: '\n', t: '\t', '0': '\0', a: '\x07', v: '\v', e: '\x1b' };

/** Undoes ClickHouse's escaped-format string escaping (`\t`, `\n`, `\\`, `\'`, `\xHH`, ...). */
export function unescapeText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\' || i === text.length - 1) {
      out += c;
      continue;
    }
    const n = text[++i]!;
    if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out += ESCAPES[n] ?? n;
    }
  }
  return out;
}

/** `{name:Type}` placeholders of a query: name → type. */
export function placeholderTypes(query: string): Map<string, string> {
  const types = new Map<string, string>();
  const re = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;
  for (const m of query.matchAll(re)) types.set(m[1]!, m[2]!);
  return types;
}

function unwrap(type: string, wrapper: string): string | undefined {
  const prefix = `${wrapper}(`;
  return type.startsWith(prefix) && type.endsWith(')') ? type.slice(prefix.length, -1).trim() : undefined;
}

const NUMERIC = /^(U?Int\d+|Float\d+|Decimal.*|BFloat16)$/;

export class ParamFormatError extends Error {}

/** Reads one element of an array literal starting at `pos`; returns it and the next position. */
function readLiteral(text: string, pos: number, elementType: string): [unknown, number] {
  while (/\s/.test(text[pos] ?? '')) pos++;
  const c = text[pos];
  if (c === "'") {
    let i = pos + 1;
    let raw = '';
    while (i < text.length && text[i] !== "'") {
      if (text[i] === '\\' && i + 1 < text.length) {
        raw += text.slice(i, i + 2);
        i += 2;
      } else raw += text[i++];
    }
    if (text[i] !== "'") throw new ParamFormatError(`unterminated string in ${text}`);
    return [unescapeText(raw), i + 1];
  }
  if (c === '[') return readArray(text, pos, elementType);
  let i = pos;
  while (i < text.length && text[i] !== ',' && text[i] !== ']') i++;
  const token = text.slice(pos, i).trim();
  if (/^null$/i.test(token)) return [null, i];
  return [convertScalar(token, elementType), i];
}

function readArray(text: string, pos: number, type: string): [unknown[], number] {
  const inner = unwrap(type, 'Array');
  if (inner === undefined) throw new ParamFormatError(`type ${type} is not an array`);
  if (text[pos] !== '[') throw new ParamFormatError(`expected [ in ${text}`);
  const out: unknown[] = [];
  let i = pos + 1;
  while (/\s/.test(text[i] ?? '')) i++;
  if (text[i] === ']') return [out, i + 1];
  for (;;) {
    const [v, next] = readLiteral(text, i, inner);
    out.push(v);
    i = next;
    while (/\s/.test(text[i] ?? '')) i++;
    if (text[i] === ',') i++;
    else if (text[i] === ']') return [out, i + 1];
    else throw new ParamFormatError(`expected , or ] in ${text}`);
  }
}

function convertScalar(token: string, type: string): unknown {
  const base = unwrap(type, 'LowCardinality') ?? type;
  if (NUMERIC.test(base)) {
    const n = Number(token);
    // Precision first: an integer past 2^53 stays text for the engine to parse.
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(token) ? n : token;
  }
  return token;
}

/** The JavaScript value for the text of `param_<name>` declared as `type`. */
export function paramValue(text: string, type: string): unknown {
  const nullable = unwrap(type, 'Nullable');
  if (nullable !== undefined) return text === '\\N' ? null : paramValue(text, nullable);
  const lowCard = unwrap(type, 'LowCardinality');
  if (lowCard !== undefined) return paramValue(text, lowCard);
  if (type.startsWith('Array(')) {
    const [value, end] = readArray(text.trim(), 0, type);
    if (end !== text.trim().length) throw new ParamFormatError(`trailing text after array in ${text}`);
    return value;
  }
  // Scalars go to the engine as text, which it parses by the declared type, as a server does.
  return unescapeText(text);
}
