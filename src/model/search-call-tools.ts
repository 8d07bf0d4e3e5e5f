import type { CallOptions, CallToolResult, Tool } from '../protocol/types.js';
import type { SearchableTool, ToolMatch } from './tool-search.js';

/** What the pair needs from a manager or a session. */
export interface SearchAndCall {
  searchTools(query: string, options?: { limit?: number }): Promise<ToolMatch[] & { nothingIndexed?: boolean }>;
  /** The warm-up when a search finds nothing indexed (a manager's or session's `listTools`). */
  listTools?(): Promise<unknown>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
}

export const SEARCH_TOOLS_NAME = 'search_tools';
export const CALL_TOOL_NAME = 'call_tool';

/**
 * Two tools a runtime can give a model instead of every tool: `search_tools` finds tools
 * for a task and returns their names, descriptions and input schemas; `call_tool` calls one
 * of them by name. Feed them through an adapter like any other tool.
 */
export function searchAndCallTools(): SearchableTool[] {
  const search: Tool = {
    name: SEARCH_TOOLS_NAME,
    description:
      'Find the tools that can do a task. Describe the task in a few words, or give a tool name. Returns the best matching tools with their input schemas; then use call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What you want to do, or a tool name' },
        limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Most tools to return (default 5)' },
      },
      required: ['query'],
    },
  };
  const call: Tool = {
    name: CALL_TOOL_NAME,
    description: 'Call a tool that search_tools returned, by its exact name, with arguments matching its input schema.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool name search_tools gave' },
        arguments: { type: 'object', description: 'The arguments, matching the tool input schema' },
      },
      required: ['name'],
    },
  };
  return [search, call].map((tool) => ({ name: tool.name, server: '', tool }));
}

/**
 * Runs a call of `search_tools` or `call_tool` against a manager or session. Failures a
 * model can act on (no such tool, bad arguments, a server that is unavailable) come back as
 * `isError` results with the message, not as exceptions.
 */
export async function runSearchAndCall(pool: SearchAndCall, name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
  try {
    if (name === SEARCH_TOOLS_NAME) {
      if (typeof args.query !== 'string') return failure('search_tools needs a "query" string');
      const limit = Number.isSafeInteger(args.limit) && (args.limit as number) > 0 ? Math.min(args.limit as number, 20) : 5;
      let matches = await pool.searchTools(args.query, { limit });
      // A search starts nothing: with no tool known yet, list once (starting the servers) and search again.
      if (matches.nothingIndexed && pool.listTools) {
        await pool.listTools();
        matches = await pool.searchTools(args.query, { limit });
      }
      const tools = matches.map((m) => ({ name: m.name, description: m.tool.description ?? m.tool.title ?? '', inputSchema: m.tool.inputSchema }));
      return { content: [{ type: 'text', text: tools.length ? JSON.stringify(tools) : 'No tool matches; try other words.' }], structuredContent: { tools } };
    }
    if (name === CALL_TOOL_NAME) {
      if (typeof args.name !== 'string') return failure('call_tool needs the "name" of a tool that search_tools returned');
      const inner = args.arguments;
      if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) return failure('call_tool "arguments" must be an object');
      return await pool.callTool(args.name, (inner ?? {}) as Record<string, unknown>, options);
    }
    return failure(`no tool named ${JSON.stringify(name)}; use search_tools or call_tool`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'unknown-tool' || code === 'unknown-server' || code === 'invalid-arguments' || code === 'unavailable') return failure((error as Error).message);
    throw error;
  }
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
