export { McpError, isMcpError } from './errors.js';
export type { McpErrorCode, McpPhase, RpcErrorData } from './errors.js';

export { McpClient } from './protocol/client.js';
export type { ConnectOptions, McpClientEvents, ServerConfig } from './protocol/client.js';
export type {
  CallOptions,
  AudioContent,
  CallToolResult,
  ContentBlock,
  EmbeddedResource,
  ImageContent,
  Implementation,
  LogMessage,
  Progress,
  ReadResourceResult,
  Resource,
  ResourceLink,
  ResourceTemplate,
  Root,
  ServerCapabilities,
  TextContent,
  Tool,
  UnknownContentBlock,
} from './protocol/types.js';

export { McpServerManager } from './manager/manager.js';
export type { ManagedResource, ManagedResourceTemplate, ManagerEvents, ManagerOptions } from './manager/manager.js';
export type { McpConfig, ServerEntryConfig } from './manager/config.js';
export type { ServerState, ServerStatus } from './manager/server-slot.js';
export type { ManagedTool } from './manager/tool-index.js';
export { ToolSession } from './manager/session.js';
export type { ToolFilter } from './manager/tool-filter.js';
export { defaultStateDir } from './manager/state-dir.js';
export { ToolSearchIndex } from './model/tool-search.js';
export { serveGateway } from './gateway/serve-gateway.js';
export type { ServeGatewayOptions, ServedGateway } from './gateway/serve-gateway.js';
export type { Gateway, GatewayOptions } from './gateway/gateway-server.js';
export type { HttpListenerOptions } from './gateway/http-listener.js';
export type { SearchOptions, SearchableTool, ToolMatch } from './model/tool-search.js';
