export { McpError } from './errors.js';
export type { McpErrorCode, McpPhase, RpcErrorData } from './errors.js';
