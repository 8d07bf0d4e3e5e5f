import type { JsonRpcMessage } from '../channel.js';
import { PROTOCOL_VERSION_META_KEY } from '../mcp-constants.js';
import { headerValue } from './param-headers.js';


/**
 * The params field `Mcp-Name` mirrors, per method (SEP-2243); other methods carry only
 * `Mcp-Method`.
 */
const NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** Whether a revision is of the 2026 era (no sessions, per-request envelope). */
export function isModernRevision(version: string | undefined): boolean {
  return version !== undefined && version >= '2026-';
}

/** The revision a request claims in its own `_meta`, if any. */
export function claimedRevision(message: JsonRpcMessage): string | undefined {
  const params = 'method' in message ? (message.params as { _meta?: Record<string, unknown> } | undefined) : undefined;
  const claim = params && typeof params === 'object' && !Array.isArray(params) ? params._meta?.[PROTOCOL_VERSION_META_KEY] : undefined;
  return typeof claim === 'string' ? claim : undefined;
}

/**
 * The 2026 routing headers mirrored from the body: `Mcp-Method` for every request,
 * `Mcp-Name` for the methods that name a tool, prompt, resource or task. Servers
 * compare them with the body, so a value they cannot carry verbatim is base64-wrapped.
 */
export function routingHeaders(message: JsonRpcMessage): Record<string, string> {
  if (!('method' in message) || !('id' in message)) return {};
  const headers: Record<string, string> = { 'mcp-method': message.method };
  const field = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method] : undefined;
  const params = message.params as Record<string, unknown> | undefined;
  const value = field !== undefined && params && typeof params === 'object' ? params[field] : undefined;
  if (typeof value === 'string') headers['mcp-name'] = headerValue(value);
  return headers;
}
