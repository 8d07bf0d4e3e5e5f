import { McpError } from '../errors.js';
import type { CallOptions, CallToolResult } from '../protocol/types.js';

/**
 * A tool call as a chat API hands it back: an OpenAI Chat Completions `tool_calls` entry,
 * an OpenAI Responses `function_call` item (both with the arguments as a JSON string), or
 * an Anthropic `tool_use` block (arguments as an object).
 */
export type ModelToolCall =
  | { id?: string; type?: 'function'; function: { name: string; arguments?: string } }
  | { type?: 'function_call'; call_id?: string; name: string; arguments?: string }
  | { type?: 'tool_use'; id?: string; name: string; input?: unknown };

/** What calling needs from a manager or a session. */
export interface ToolCaller {
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
}

/** Longest part of a model's malformed arguments quoted back in an error. */
const QUOTED = 120;

/**
 * The public tool name and the arguments object of a model's tool call. Arguments that are
 * not a JSON object throw `invalid-arguments` naming the tool and what was given; empty
 * arguments (some models send `""` for a tool without parameters) are `{}`.
 */
export function parseModelToolCall(call: ModelToolCall): { name: string; arguments: Record<string, unknown> } {
  if (typeof call !== 'object' || call === null) throw new McpError('invalid-arguments', `a tool call must be an object, got ${describe(call)}`);
  const name = 'function' in call && typeof call.function === 'object' && call.function !== null ? call.function.name : (call as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') throw new McpError('invalid-arguments', `a tool call needs a "name" (or "function.name") string, got ${describe(name)}`);
  const given = 'function' in call && typeof call.function === 'object' && call.function !== null ? call.function.arguments : 'input' in call ? call.input : (call as { arguments?: unknown }).arguments;
  let args: unknown = given;
  if (typeof given === 'string') {
    if (given.trim() === '') args = {};
    else {
      try {
        args = JSON.parse(given);
      } catch {
        throw new McpError('invalid-arguments', `tool call ${JSON.stringify(name)}: arguments must be a JSON object, got unparsable text ${describe(given)}`);
      }
    }
  }
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args)) throw new McpError('invalid-arguments', `tool call ${JSON.stringify(name)}: arguments must be a JSON object, got ${describe(args)}`);
  return { name, arguments: args as Record<string, unknown> };
}

/**
 * Calls the tool a model asked for, on a manager or a session: `name` is the public name
 * the adapters gave the model. The result is the tool's; feed it back with the matching
 * adapter (`toOpenAiChatToolMessage(call.id, result)`, `toAnthropicToolResult(...)`).
 */
export async function callModelToolCall(pool: ToolCaller, call: ModelToolCall, options?: CallOptions): Promise<CallToolResult> {
  const { name, arguments: args } = parseModelToolCall(call);
  return pool.callTool(name, args, options);
}

function describe(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text;
}
