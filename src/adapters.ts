// `lazy-mcp/adapters`: MCP tools and results in the chat APIs' own shapes. Pure functions,
// no provider SDK; each documents what it changes.
export {
  openAiSchema,
  openAiToolSearchTool,
  toOpenAiChatTool,
  toOpenAiChatToolMessage,
  toOpenAiFunctionCallOutput,
  toOpenAiResponsesTool,
} from './model/adapters/openai.js';
export type { OpenAiChatTool, OpenAiOutputPart, OpenAiResponsesTool, OpenAiSchema, OpenAiToolOptions } from './model/adapters/openai.js';
export { anthropicSchema, anthropicToolSearchTool, toAnthropicTool, toAnthropicToolReferences, toAnthropicToolResult } from './model/adapters/anthropic.js';
export type { AnthropicResultBlock, AnthropicTool } from './model/adapters/anthropic.js';
export { geminiSchema, toGeminiFunctionDeclaration, toGeminiFunctionResponse } from './model/adapters/gemini.js';
export type { GeminiFunctionDeclaration, GeminiFunctionResponsePart } from './model/adapters/gemini.js';
export { CALL_TOOL_NAME, runSearchAndCall, SEARCH_TOOLS_NAME, searchAndCallTools } from './model/search-call-tools.js';
export type { SearchAndCall } from './model/search-call-tools.js';
export { callModelToolCall, parseModelToolCall } from './model/model-tool-call.js';
export type { ModelToolCall, ToolCaller } from './model/model-tool-call.js';
export { cutResult } from './model/result-limits.js';
export type { SavedResult } from './model/result-limits.js';
export type { JsonSchema, SchemaReport } from './model/schema-transform.js';
export type { SearchableTool, ToolMatch } from './model/tool-search.js';
