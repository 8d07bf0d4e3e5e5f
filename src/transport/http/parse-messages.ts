import type { JsonRpcMessage } from '../channel.js';

/** Parses one body or SSE event: a JSON-RPC message (or a batch of them), or undefined for noise. */
export function parseMessages(text: string): JsonRpcMessage[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(value) ? value : [value];
  return list.every(isJsonRpc) ? (list as JsonRpcMessage[]) : undefined;
}

function isJsonRpc(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}
