// Anthropic Messages API tools from MCP tools, and tool results back. Rules followed, from
// Anthropic's documentation:
// - Tool definitions (`name` matching ^[a-zA-Z0-9_-]{1,64}$, `description`, `input_schema`
//   a JSON Schema object): https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
// - Tool search (`defer_loading: true` on tools, the `tool_search_tool_bm25_20251119` or
//   `tool_search_tool_regex_20251119` server tool, or a custom search returning
//   `tool_reference` blocks): https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
// - Tool results (`tool_result` with text, image and document blocks, `is_error`):
//   https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls
import type { CallToolResult } from '../../protocol/types.js';
import type { SearchableTool } from '../tool-search.js';
import { flattenRootUnion, inlineRefs, type JsonSchema, mergeAllOf, newReport, objectRoot, type SchemaReport } from '../schema-transform.js';
import { omitted, partsOf } from './content.js';

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
  defer_loading?: boolean;
}

export type AnthropicResultBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }
  | { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } };

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * The `input_schema` for Anthropic. What it changes:
 * - local `$ref`s are inlined and `$defs`/`definitions`/`$schema`/`$id` removed; a recursive
 *   reference is cut to an open schema with a note in its description;
 * - a root without `type` gets `type: "object"`;
 * - a root `allOf` is merged into one object, and a root `anyOf`/`oneOf` of object shapes
 *   flattened into one object (the API rejects these at the top level) — this widens what is
 *   accepted, which the argument check before every call still catches.
 * Everything else is JSON Schema the API accepts and is kept as written.
 */
export function anthropicSchema(inputSchema: unknown): { schema: JsonSchema; report: SchemaReport } {
  const report = newReport();
  const schema = flattenRootUnion(mergeAllOf(inlineRefs(objectRoot(inputSchema), report), report, ''), report);
  return { schema, report };
}

/** An Anthropic tool for an MCP tool, named by its public name; `deferLoading` marks it for tool search. */
export function toAnthropicTool(tool: SearchableTool, options: { deferLoading?: boolean } = {}): AnthropicTool {
  const text = tool.tool.description ?? tool.tool.title;
  return {
    name: tool.name,
    ...(text ? { description: text } : {}),
    input_schema: anthropicSchema(tool.tool.inputSchema).schema,
    ...(options.deferLoading ? { defer_loading: true } : {}),
  };
}

/** Anthropic's server-side tool search tool: `bm25` (natural-language queries, the default) or `regex`. */
export function anthropicToolSearchTool(variant: 'bm25' | 'regex' = 'bm25'): { type: string; name: string } {
  return { type: `tool_search_tool_${variant}_20251119`, name: `tool_search_tool_${variant}` };
}

/**
 * The `tool_reference` blocks a custom (client-side) tool search returns in its
 * `tool_result`, so Claude loads those deferred tools: pass the matches of `searchTools`.
 */
export function toAnthropicToolReferences(matches: readonly { name: string }[]): { type: 'tool_reference'; tool_name: string }[] {
  return matches.map((m) => ({ type: 'tool_reference', tool_name: m.name }));
}

/**
 * A `tool_result` block for a result: text as text; PNG/JPEG/GIF/WebP images as base64
 * image blocks; PDF resources as document blocks; audio, other image types and other
 * binary resources as a line saying what was left out (tool results cannot carry them);
 * `isError` as `is_error`.
 */
export function toAnthropicToolResult(toolUseId: string, result: CallToolResult): { type: 'tool_result'; tool_use_id: string; content: AnthropicResultBlock[]; is_error?: boolean } {
  const content: AnthropicResultBlock[] = [];
  for (const part of partsOf(result)) {
    if (part.kind === 'text') content.push({ type: 'text', text: part.text });
    else if ((part.kind === 'image' || part.kind === 'file') && IMAGE_TYPES.has(part.mimeType)) {
      content.push({ type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } });
    } else if (part.kind === 'file' && part.mimeType === 'application/pdf') {
      content.push({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: part.data } });
    } else content.push({ type: 'text', text: omitted(part, 'Anthropic') });
  }
  return { type: 'tool_result', tool_use_id: toolUseId, content, ...(result.isError ? { is_error: true } : {}) };
}
