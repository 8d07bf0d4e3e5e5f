// Gemini function declarations from MCP tools, and tool results back. Rules followed, from
// Google's documentation:
// - Function calling (`functionDeclarations` with `name`, `description`, `parameters`; a
//   function without parameters leaves `parameters` unset; `functionResponse` with
//   `response.output` / `response.error`, and multimodal `parts` for images and PDFs):
//   https://ai.google.dev/gemini-api/docs/function-calling
// - The `Schema` object, "a select subset of an OpenAPI 3.0 schema object": type, format,
//   title, description, nullable, enum (strings), items, properties, required,
//   propertyOrdering, minItems/maxItems, minLength/maxLength, pattern, minimum/maximum,
//   minProperties/maxProperties, anyOf, default, example; formats: `enum` and `date-time`
//   for strings, `float`/`double` and `int32`/`int64` for numbers:
//   https://ai.google.dev/api/caching#Schema
import type { CallToolResult } from '../../protocol/types.js';
import type { SearchableTool } from '../tool-search.js';
import {
  flattenRootUnion,
  inlineRefs,
  isSchemaObject,
  joinText,
  type JsonSchema,
  mapSchema,
  mergeAllOf,
  newReport,
  objectRoot,
  type SchemaReport,
  typesOf,
} from '../schema-transform.js';
import { omitted, partsOf } from './content.js';

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: JsonSchema;
}

export interface GeminiFunctionResponsePart {
  functionResponse: {
    name: string;
    response: { output: string } | { error: string };
    parts?: { inlineData: { mimeType: string; data: string } }[];
  };
}

const KEPT = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'properties', 'required', 'propertyOrdering',
  'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties', 'maxProperties',
  'anyOf', 'default', 'example',
]);
const FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};
const RESPONSE_PART_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/plain']);
/** What an untyped value (`{}`, a cut cycle) becomes: the widest union Gemini can express. */
const ANY_VALUE = (): JsonSchema => ({ anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }] });

/**
 * The `parameters` schema for Gemini, or undefined for a tool without parameters. What it changes:
 * - local `$ref`s are inlined and `$defs`/`definitions`/`$schema`/`$id` removed; a recursive
 *   reference is cut with a note in its description;
 * - `allOf` is merged into one schema; `oneOf` becomes `anyOf`; a root `anyOf`/`oneOf` of
 *   objects is flattened into one object (required: what every branch requires);
 * - a `type` list becomes one type plus `nullable: true` for `"null"`, or an `anyOf` of the types;
 * - `const` becomes a one-value string `enum`, or a description note for a non-string;
 *   an `enum` with non-string values moves into the description ("one of: …");
 * - `format`s Gemini does not know, `exclusiveMinimum`/`exclusiveMaximum`, `multipleOf`,
 *   `additionalProperties`, `patternProperties`, tuple `prefixItems`, `not`, `if`/`then`/`else`
 *   and other keywords outside the subset are removed; the constraints among them are kept
 *   as words in the description so the model still sees them;
 * - `examples` becomes `example` (its first value);
 * - an untyped value becomes an `anyOf` of string, number, boolean and object, and an
 *   array without `items` gets that as its items; an empty `properties` is removed;
 * - `required` names only properties that exist; `required` never gains names, so nothing
 *   optional becomes required.
 * Property names are kept as they are (renaming would break the call's arguments).
 */
export function geminiSchema(inputSchema: unknown): { schema: JsonSchema | undefined; report: SchemaReport } {
  const report = newReport();
  const root = flattenRootUnion(mergeAllOf(inlineRefs(objectRoot(inputSchema), report), report, ''), report);
  const schema = mapSchema(root, (node, path) => toGeminiNode(mergeAllOf(node, report, path), path, report));
  const hasParameters = isSchemaObject(schema.properties) && Object.keys(schema.properties).length > 0;
  return { schema: hasParameters ? schema : undefined, report };
}

function toGeminiNode(node: JsonSchema, path: string, report: SchemaReport): JsonSchema {
  const at = path || '/';
  const out: JsonSchema = {};
  const hints: string[] = [];
  let types = typesOf(node);
  if (types.includes('null')) {
    out.nullable = true;
    types = types.filter((t) => t !== 'null');
  }
  if (types.length === 1) out.type = types[0];
  else if (types.length > 1) {
    out.anyOf = types.map((type) => ({ type }));
    report.notes.push(`turned the type list at ${at} into anyOf`);
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type') continue;
    if (key === 'oneOf' || key === 'anyOf') {
      out.anyOf = [...((out.anyOf as unknown[]) ?? []), ...(value as unknown[])];
      if (key === 'oneOf') report.notes.push(`turned oneOf into anyOf at ${at}`);
    } else if (key === 'const') {
      if (typeof value === 'string') {
        out.type ??= 'string';
        out.enum = [value];
      } else hints.push(`must be ${JSON.stringify(value)}`);
      report.notes.push(`replaced "const" at ${at}`);
    } else if (key === 'enum' && Array.isArray(value)) {
      const values = value.filter((v) => v !== null);
      if (values.length < value.length) out.nullable = true;
      if (values.every((v) => typeof v === 'string')) {
        out.enum = values;
        if (out.type === undefined || out.type === 'string') out.type = 'string';
        else {
          hints.push(`one of: ${values.map((v) => JSON.stringify(v)).join(', ')}`);
          delete out.enum;
        }
      } else {
        hints.push(`one of: ${values.map((v) => JSON.stringify(v)).join(', ')}`);
        report.notes.push(`moved a non-string enum into the description at ${at}`);
      }
    } else if (key === 'format') {
      const type = typeof out.type === 'string' ? out.type : typesOf(node)[0];
      if (FORMATS[type]?.has(String(value))) out.format = value;
      else {
        hints.push(`format: ${String(value)}`);
        report.notes.push(`moved format ${JSON.stringify(value)} into the description at ${at}`);
      }
    } else if (key === 'examples' && Array.isArray(value)) {
      if (value.length > 0) out.example = value[0];
    } else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum' || key === 'multipleOf') {
      hints.push(`${key === 'multipleOf' ? 'a multiple of' : key === 'exclusiveMinimum' ? 'greater than' : 'less than'} ${String(value)}`);
      report.notes.push(`moved "${key}" into the description at ${at}`);
    } else if (KEPT.has(key)) {
      if (!(key in out) || key === 'description') out[key] = value;
    } else {
      if (key === 'additionalProperties' && isSchemaObject(value) && !isSchemaObject(node.properties)) hints.push('an object with any keys');
      report.notes.push(`removed "${key}" at ${at}`);
    }
  }
  if (isSchemaObject(out.properties)) {
    const names = Object.keys(out.properties);
    if (names.length === 0) delete out.properties;
    out.type ??= 'object';
    if (Array.isArray(out.required)) {
      const required = (out.required as unknown[]).filter((n): n is string => typeof n === 'string' && names.includes(n));
      if (required.length > 0) out.required = required;
      else delete out.required;
    }
  } else delete out.required;
  if (out.type === 'array' && !isSchemaObject(out.items)) {
    out.items = ANY_VALUE();
    if (Array.isArray(node.items) || Array.isArray(node.prefixItems)) hints.push('a fixed-length list');
  }
  if (out.type === undefined && !Array.isArray(out.anyOf) && !Array.isArray(out.enum)) {
    Object.assign(out, ANY_VALUE());
    report.notes.push(`gave the untyped value at ${at} an anyOf of the basic types`);
  }
  if (hints.length > 0) out.description = joinText(out.description, `(${hints.join('; ')})`);
  return out;
}

/** A Gemini function declaration for an MCP tool, named by its public name. */
export function toGeminiFunctionDeclaration(tool: SearchableTool): GeminiFunctionDeclaration {
  const text = tool.tool.description ?? tool.tool.title;
  const { schema } = geminiSchema(tool.tool.inputSchema);
  return { name: tool.name, ...(text ? { description: text } : {}), ...(schema ? { parameters: schema } : {}) };
}

/**
 * A `functionResponse` part for a result: the text as `response.output` (or
 * `response.error` when `isError`); PNG/JPEG/WebP images and PDFs as inline `parts` of the
 * response; audio and other binary content as a line saying what was left out.
 */
export function toGeminiFunctionResponse(name: string, result: CallToolResult): GeminiFunctionResponsePart {
  const texts: string[] = [];
  const parts: { inlineData: { mimeType: string; data: string } }[] = [];
  for (const part of partsOf(result)) {
    if (part.kind === 'text') texts.push(part.text);
    else if (part.kind !== 'audio' && RESPONSE_PART_TYPES.has(part.mimeType)) parts.push({ inlineData: { mimeType: part.mimeType, data: part.data } });
    else texts.push(omitted(part, 'Gemini'));
  }
  const text = texts.join('\n');
  return { functionResponse: { name, response: result.isError ? { error: text } : { output: text }, ...(parts.length ? { parts } : {}) } };
}
