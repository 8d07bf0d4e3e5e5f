// OpenAI function tools (Chat Completions and Responses) from MCP tools, and tool results
// back. Rules followed, from OpenAI's documentation:
// - Structured Outputs / strict function calling, "Supported schemas":
//   https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
//   (root an object and not anyOf; every property listed in `required`; optional values
//   emulated with a `null` type; `additionalProperties: false` on every object; types
//   string/number/integer/boolean/object/array/enum/anyOf; string `pattern` and `format`
//   (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid); number
//   minimum/maximum/exclusive*/multipleOf; array minItems/maxItems; at most 5000 object
//   properties and 10 levels of nesting). Function calling with `strict: true` uses the
//   same subset: https://platform.openai.com/docs/guides/function-calling#strict-mode
// - Tool search (Responses, `tool_search` tool plus `defer_loading: true` on functions):
//   https://developers.openai.com/api/docs/guides/tools-tool-search
import type { CallToolResult } from '../../protocol/types.js';
import type { SearchableTool } from '../tool-search.js';
import {
  acceptsNull,
  inlineRefs,
  isSchemaObject,
  joinText,
  type JsonSchema,
  mapSchema,
  newReport,
  objectRoot,
  type SchemaReport,
  typesOf,
} from '../schema-transform.js';
import { ERROR_LEAD, omitted, partsOf } from './content.js';

export interface OpenAiChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonSchema; strict: boolean };
}

export interface OpenAiResponsesTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: JsonSchema;
  strict: boolean;
  defer_loading?: boolean;
}

export interface OpenAiToolOptions {
  /** `"auto"` (default): strict when the schema can be made strict without changing what it accepts; `false`: never. */
  strict?: 'auto' | false;
}

/** A schema for OpenAI and whether it is sent strict; `report.notes` says what changed and, if not strict, why. */
export interface OpenAiSchema {
  parameters: JsonSchema;
  strict: boolean;
  report: SchemaReport;
}

const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** Keywords strict mode accepts; anything else either is an annotation we may drop or makes the schema non-strict. */
const STRICT_KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'anyOf', 'description', 'title',
  'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);
/** Annotations: they do not change which values are valid, so dropping them keeps the meaning. */
const ANNOTATIONS = new Set(['default', 'examples', 'example', 'deprecated', 'readOnly', 'writeOnly', 'contentEncoding', 'contentMediaType', 'markdownDescription']);

/**
 * The parameters schema for OpenAI. What it changes:
 * - local `$ref`s are inlined and `$defs`/`definitions`/`$schema`/`$id` removed; a recursive
 *   reference is cut to an open schema with a note in its description;
 * - a root without `type` gets `type: "object"`.
 * Strict mode is used only when the result means the same under OpenAI's strict rules, and
 * then additionally:
 * - `additionalProperties: false` is set on objects that declare properties (the model may
 *   only send declared properties: every such value is still valid for the tool);
 * - an optional property whose schema already accepts `null` is listed in `required`
 *   (sending `null` is valid for the tool); an optional property that does not accept `null`
 *   makes the schema non-strict, since making it nullable would send the tool a value it
 *   never accepted;
 * - `const: x` becomes `enum: [x]`; a `format` strict mode does not know moves into the
 *   description (in JSON Schema 2020-12 `format` is an annotation, so validity is unchanged);
 *   annotations (`default`, `examples`, `deprecated`, …) are removed.
 * Anything else strict mode does not accept (`allOf`, `oneOf`, `not`, `if`, `minLength`,
 * `patternProperties`, an open map, an unconstrained `{}`, a cut cycle, the size limits)
 * gives a non-strict schema, which keeps every keyword as the server wrote it.
 */
export function openAiSchema(inputSchema: unknown, options: OpenAiToolOptions = {}): OpenAiSchema {
  const report = newReport();
  const inlined = inlineRefs(objectRoot(inputSchema), report);
  if (options.strict === false) return { parameters: inlined, strict: false, report };
  const why: string[] = [];
  let properties = 0;
  let deepest = 0;
  const strictSchema = mapSchema(inlined, (node, path) => {
    const depth = path.split('/properties/').length - 1;
    deepest = Math.max(deepest, depth);
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (ANNOTATIONS.has(key)) {
        report.notes.push(`removed the annotation "${key}" at ${path || '/'}`);
        continue;
      }
      if (key === 'const') {
        out.enum = [value];
        report.notes.push(`replaced "const" with a one-value "enum" at ${path || '/'}`);
        continue;
      }
      if (key === 'format' && !STRICT_FORMATS.has(String(value))) {
        out.description = joinText(out.description ?? node.description, `(format: ${String(value)})`);
        report.notes.push(`moved format ${JSON.stringify(value)} into the description at ${path || '/'}`);
        continue;
      }
      if (key === 'description' && out.description !== undefined) continue;
      if (!STRICT_KEYWORDS.has(key)) why.push(`"${key}" at ${path || '/'}`);
      out[key] = value;
    }
    const types = typesOf(out);
    const isObject = types.includes('object') || isSchemaObject(out.properties);
    if (types.length === 0 && !Array.isArray(out.anyOf) && !Array.isArray(out.enum)) why.push(`an unconstrained value at ${path || '/'}`);
    if (isObject) {
      const props = isSchemaObject(out.properties) ? out.properties : undefined;
      if (!props || Object.keys(props).length === 0) {
        if (out.additionalProperties !== false) why.push(`an open object at ${path || '/'}`);
      } else {
        properties += Object.keys(props).length;
        if (out.additionalProperties !== undefined && out.additionalProperties !== false && out.additionalProperties !== true) {
          why.push(`"additionalProperties" with a schema at ${path || '/'}`);
        }
        if (out.additionalProperties !== false) {
          out.additionalProperties = false;
          report.notes.push(`set additionalProperties: false at ${path || '/'}`);
        }
        const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
        for (const [name, child] of Object.entries(props)) {
          if (required.has(name)) continue;
          if (isSchemaObject(child) && acceptsNull(child)) {
            required.add(name);
            report.notes.push(`listed the nullable optional property "${name}" as required at ${path || '/'}`);
          } else why.push(`the optional property "${name}" at ${path || '/'}, which does not accept null`);
        }
        out.required = Object.keys(props).filter((name) => required.has(name));
      }
    }
    return out;
  });
  if (Array.isArray(inlined.anyOf) || !typesOf(inlined).includes('object')) why.push('a root that is not a plain object');
  if (properties > 5000) why.push(`${properties} object properties (strict allows 5000)`);
  if (deepest > 10) why.push(`${deepest} levels of nesting (strict allows 10)`);
  if (report.cycles || report.unresolved) why.push('a cut or unresolved reference');
  if (why.length > 0) {
    const plain = newReport();
    plain.notes.push(...report.notes.filter((n) => n.startsWith('inlined') || n.startsWith('cut') || n.startsWith('replaced the unresolvable')));
    plain.notes.push(`not strict: ${why.slice(0, 5).join('; ')}${why.length > 5 ? `; and ${why.length - 5} more` : ''}`);
    Object.assign(plain, { cycles: report.cycles, unresolved: report.unresolved });
    return { parameters: inlined, strict: false, report: plain };
  }
  return { parameters: strictSchema, strict: true, report };
}

/** A Chat Completions function tool for an MCP tool, named by its public name. */
export function toOpenAiChatTool(tool: SearchableTool, options: OpenAiToolOptions = {}): OpenAiChatTool {
  const { parameters, strict } = openAiSchema(tool.tool.inputSchema, options);
  return { type: 'function', function: { name: tool.name, ...description(tool), parameters, strict } };
}

/**
 * A Responses API function tool. `deferLoading: true` marks it for OpenAI's tool search
 * (send {@link openAiToolSearchTool} in the same `tools` array).
 */
export function toOpenAiResponsesTool(tool: SearchableTool, options: OpenAiToolOptions & { deferLoading?: boolean } = {}): OpenAiResponsesTool {
  const { parameters, strict } = openAiSchema(tool.tool.inputSchema, options);
  return { type: 'function', name: tool.name, ...description(tool), parameters, strict, ...(options.deferLoading ? { defer_loading: true } : {}) };
}

/** The hosted tool-search tool of the Responses API, which loads `defer_loading` functions on demand. */
export function openAiToolSearchTool(): { type: 'tool_search' } {
  return { type: 'tool_search' };
}

/**
 * A Chat Completions `tool` message for a result. Tool messages carry text only, so images,
 * audio and binary resources become a line saying what was left out; `isError` becomes a
 * leading sentence (the API has no error flag).
 */
export function toOpenAiChatToolMessage(toolCallId: string, result: CallToolResult): { role: 'tool'; tool_call_id: string; content: string } {
  const texts = partsOf(result).map((p) => (p.kind === 'text' ? p.text : omitted(p, 'Chat Completions')));
  if (result.isError) texts.unshift(ERROR_LEAD);
  return { role: 'tool', tool_call_id: toolCallId, content: texts.join('\n') };
}

export type OpenAiOutputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string }
  | { type: 'input_file'; filename: string; file_data: string };

/**
 * A Responses `function_call_output` item. Text stays text, images become `input_image`
 * data URLs, PDFs and other binary resources `input_file` (named after their URI); audio,
 * which function outputs cannot carry, becomes a line saying so. `isError` becomes a
 * leading sentence.
 */
export function toOpenAiFunctionCallOutput(callId: string, result: CallToolResult): { type: 'function_call_output'; call_id: string; output: OpenAiOutputPart[] } {
  const output: OpenAiOutputPart[] = [];
  if (result.isError) output.push({ type: 'input_text', text: ERROR_LEAD });
  for (const part of partsOf(result)) {
    if (part.kind === 'text') output.push({ type: 'input_text', text: part.text });
    else if (part.kind === 'image') output.push({ type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}` });
    else if (part.kind === 'file') {
      output.push({ type: 'input_file', filename: part.uri.split('/').pop() || 'resource', file_data: `data:${part.mimeType};base64,${part.data}` });
    } else output.push({ type: 'input_text', text: omitted(part, 'OpenAI') });
  }
  return { type: 'function_call_output', call_id: callId, output };
}

function description(tool: SearchableTool): { description?: string } {
  const text = tool.tool.description ?? tool.tool.title;
  return text ? { description: text } : {};
}
