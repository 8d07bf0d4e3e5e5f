export { McpError, isMcpError } from './errors.js';
export type { McpErrorCode, McpPhase, RpcErrorData } from './errors.js';

export { McpClient } from './protocol/client.js';
export type { ConnectOptions, McpClientEvents, RemoteServerConfig, RequestOptions, ServerConfig, StdioServerConfig } from './protocol/client.js';
export type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext, RequestId } from './transport/channel.js';
export type { ExitStatus } from './transport/stdio/server-process.js';
export type {
  CallOptions,
  AudioContent,
  CallToolResult,
  Completion,
  ContentBlock,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  EmbeddedResource,
  GetPromptResult,
  HostHandlers,
  HostRequestContext,
  ImageContent,
  Implementation,
  LogMessage,
  Progress,
  Prompt,
  PromptRef,
  ProtocolEra,
  ReadResourceResult,
  Resource,
  ResourceLink,
  ResourceTemplate,
  ResourceTemplateRef,
  Root,
  SamplingContent,
  SamplingMessage,
  ServerCapabilities,
  TextContent,
  Tool,
  ToolResultContent,
  ToolUseContent,
  UnknownContentBlock,
} from './protocol/types.js';

export { McpServerManager } from './manager/manager.js';
export type { ManagerEvents } from './manager/events.js';
export type { FileOptions, ManagerOptions } from './manager/options.js';
export type { ReloadReport } from './manager/config/config-diff.js';
export type { ServerMetrics } from './manager/telemetry/metrics.js';
export type { McpConfig, ServerEntryConfig } from './manager/config/config.js';
export type { SharedOptions } from './share/daemon/paths.js';
export type { ClusterOptions } from './share/cluster/options.js';
export type { DaemonStatus } from './share/daemon/wire.js';
export type { ServerState, ServerStatus } from './manager/pool/server-slot.js';
export type { ManagedTool } from './manager/catalog/tool-index.js';
export type { CacheHintsMode } from './manager/catalog/tool-catalog.js';
export type { ManagedPrompt } from './manager/catalog/prompt-index.js';
export type { ServerDescription } from './manager/catalog/server-description.js';
export type { SandboxOptions, SandboxPolicy, SandboxStatus } from './transport/stdio/sandbox/policy.js';
export type { CompleteOptions, LogLevel, ManagedResource, ManagedResourceTemplate, ServersOption } from './manager/scope/scope.js';
export type { Scope } from './manager/scope/scope.js';
export type { DeclaredCapabilities } from './manager/scope/host-handlers.js';
export { ToolSession } from './manager/scope/session.js';
export type { ToolFilter } from './manager/catalog/tool-filter.js';
export { defaultStateDir } from './util/state-dir.js';
export type { LoginOptions } from './manager/auth/auth.js';
export type { Authorize } from './transport/http/oauth/provider-types.js';
export type { OAuthRecord, StoredClient, StoredTokens, TokenStore } from './transport/http/oauth/token-store.js';
export { ToolSearchIndex } from './model/tool-search.js';
export { serveGateway } from './gateway/serve-gateway.js';
export type { ServeGatewayOptions, ServedGateway } from './gateway/serve-gateway.js';
export type { Gateway, GatewayOptions } from './gateway/gateway-server.js';
export type { HttpListenerOptions } from './gateway/http-listener.js';
export type { SearchOptions, SearchToolsOptions, SearchableTool, ToolMatch, ToolSearchResult } from './model/tool-search.js';
export type { EmbedFunction } from './model/embedding-rank.js';
export type { CredentialsResolver, Principal } from './manager/principals/principal-scope.js';
export type { Identity, JwtAuthOptions } from './share/principals/jwt-front.js';
export type { Policy } from './share/principals/policies.js';
export type { Limits } from './share/principals/access.js';
export { MemoryLimitStore } from './share/principals/limit-store.js';
export type { BucketSpec, LimitStore, TakeResult } from './share/principals/limit-store.js';
