/**
 * SEP-2243's custom headers (2026-07-28 Streamable HTTP): a tool's `inputSchema` may mark
 * parameters with `x-mcp-header: <Name>`, and a client over HTTP then mirrors each such
 * argument of a `tools/call` into an `Mcp-Param-<Name>` header, so that gateways and load
 * balancers can route on it without reading the body. The server compares the two and
 * refuses a call whose headers are missing or differ (-32020 HeaderMismatch).
 */

/** The extension keyword in a property's schema. */
const KEYWORD = 'x-mcp-header';

/** RFC 9110 §5.1 `token` (1*tchar): no spaces, delimiters or control characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The types a marked property may have: the spec admits these primitives and not `number`. */
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);

/**
 * Keywords whose subschemas are not on a chain of `properties` from the root: a mark under
 * any of them (an array item, a branch of `anyOf`, a `$defs` entry) makes the tool invalid.
 */
const UNREACHABLE = [
  'items', 'prefixItems', 'contains', 'additionalItems', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems',
  'propertyNames', 'patternProperties', 'dependentSchemas', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$defs', 'definitions',
];
/** Of those, the ones whose value maps names to subschemas. */
const NAMED_SUBSCHEMAS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** One marked parameter: where its value is in the arguments, and the header it goes into. */
export interface HeaderParam {
  /** The chain of `properties` keys from the root to the parameter. */
  path: string[];
  /** `<Name>` of `Mcp-Param-<Name>`, as the schema spells it. */
  name: string;
}

/** What a tool's schema says about custom headers: its marked parameters, or why its marks are invalid. */
export type HeaderParamScan = { ok: true; params: HeaderParam[] } | { ok: false; reason: string };

/** How deep the scan follows a schema; deeper is refused rather than walked (hostile input). */
const MAX_DEPTH = 64;

/**
 * The parameters a tool's `inputSchema` marks with `x-mcp-header`, checked against every
 * constraint the spec puts on a mark: a non-empty RFC 9110 token, unique regardless of
 * case, on a string, integer or boolean property reachable from the root through
 * `properties` alone. The first violation is the tool's `reason`; a client over HTTP
 * leaves such a tool out of its listing.
 */
export function scanHeaderParams(inputSchema: unknown): HeaderParamScan {
  const params: HeaderParam[] = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean, depth: number): string | undefined => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    if (depth > MAX_DEPTH) return `the schema nests deeper than ${MAX_DEPTH} levels`;
    const schema = node as Record<string, unknown>;
    if (Object.hasOwn(schema, KEYWORD)) {
      const at = path.length === 0 ? 'the schema root' : `property ${JSON.stringify(path.join('.'))}`;
      const mark = schema[KEYWORD];
      if (!reachable || path.length === 0) return `${KEYWORD} on ${at} is not reachable from the root through "properties" alone`;
      if (typeof mark !== 'string' || mark === '') return `${KEYWORD} on ${at} must be a non-empty string, got ${JSON.stringify(mark)}`;
      if (!TOKEN.test(mark)) return `${KEYWORD} ${JSON.stringify(mark)} on ${at} is not an HTTP header name token (no spaces, delimiters, control or non-ASCII characters)`;
      const type = schema.type;
      if (typeof type !== 'string' || !PRIMITIVE.has(type)) return `${KEYWORD} ${JSON.stringify(mark)} on ${at} needs type string, integer or boolean, got ${JSON.stringify(type)}`;
      const earlier = seen.get(mark.toLowerCase());
      if (earlier !== undefined) return `${KEYWORD} ${JSON.stringify(mark)} on ${at} repeats ${JSON.stringify(earlier)} (header names ignore case)`;
      seen.set(mark.toLowerCase(), mark);
      params.push({ path, name: mark });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable, depth + 1);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : NAMED_SUBSCHEMAS.has(keyword) && sub !== null && typeof sub === 'object' ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, keyword], false, depth + 1);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true, 0);
  return fault === undefined ? { ok: true, params } : { ok: false, reason: fault };
}

/**
 * The `Mcp-Param-<Name>` headers of one call: each marked parameter's argument, as text
 * (a string as it is, an integer in decimal, a boolean as `true` / `false`), encoded by
 * {@link headerValue}. An argument that is absent or null gets no header; one that is not
 * a primitive of those kinds (or an integer beyond 2^53) gets none either: the server's
 * own validation reports the argument, which a malformed header would only obscure.
 */
export function paramHeaders(params: readonly HeaderParam[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const param of params) {
    const text = asText(valueAt(args, param.path));
    if (text !== undefined) headers[`mcp-param-${param.name.toLowerCase()}`] = headerValue(text);
  }
  return headers;
}

/**
 * A value as an HTTP field value: as it is when it is plain visible ASCII with inner
 * spaces only, else `=?base64?<UTF-8 in base64>?=` (non-ASCII, control characters tab
 * included, leading or trailing space, the empty string, or text that already looks
 * like that sentinel). Shared by `Mcp-Name` and `Mcp-Param-*`.
 */
export function headerValue(value: string): string {
  const plain = value !== '' && value === value.trim() && /^[\x20-\x7e]*$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}
