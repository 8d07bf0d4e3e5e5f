import type { z } from 'zod';
import type {
  CallToolResultSchema,
  CompleteResultSchema,
  CreateMessageResultSchema,
  DiscoverResultSchema,
  ElicitResultSchema,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  PromptSchema,
  InitializeResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  ToolSchema,
} from './schemas/schemas.js';

/** Legacy (`initialize`) revisions this client speaks, newest first; the first is offered. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
/** The stateless revision: `server/discover`, per-request `_meta`, multi round-trip requests. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every revision this client speaks, the modern one first. */
export const ALL_PROTOCOL_VERSIONS = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS] as const;
export type ProtocolRevision = (typeof ALL_PROTOCOL_VERSIONS)[number];
/** `2026`: revision 2026-07-28 (stateless); `legacy`: an `initialize` revision. */
export type ProtocolEra = '2026' | 'legacy';

/** A tool as its server defines it (`name`, `description`, `inputSchema`, …). */
export type Tool = z.infer<typeof ToolSchema>;
export type ListToolsResult = z.infer<typeof ListToolsResultSchema>;
/**
 * The content blocks of the current revisions, narrowable on `type`. A block of a newer
 * revision still passes through at run time: in a `switch`'s `default` it is typed
 * `never`, so read it as an {@link UnknownContentBlock}. Fields a newer server adds are
 * kept (the index signatures).
 */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;
interface BlockExtras {
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [field: string]: unknown;
}
export interface TextContent extends BlockExtras {
  type: 'text';
  text: string;
}
export interface ImageContent extends BlockExtras {
  type: 'image';
  /** Base64. */
  data: string;
  mimeType: string;
}
export interface AudioContent extends BlockExtras {
  type: 'audio';
  /** Base64. */
  data: string;
  mimeType: string;
}
export interface ResourceLink extends BlockExtras {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}
export interface EmbeddedResource extends BlockExtras {
  type: 'resource';
  /** Text contents have `text`, binary ones `blob` (base64). */
  resource: { uri: string; mimeType?: string; text?: string; blob?: string; [field: string]: unknown };
}
/** A block whose `type` this version does not know, as it arrives. */
export interface UnknownContentBlock {
  type: string;
  [field: string]: unknown;
}
/** A tool's answer; `isError: true` is the tool's own failure, returned rather than thrown. */
export type CallToolResult = z.infer<typeof CallToolResultSchema>;
export type Resource = z.infer<typeof ResourceSchema>;
export type ListResourcesResult = z.infer<typeof ListResourcesResultSchema>;
export type ResourceTemplate = z.infer<typeof ResourceTemplateSchema>;
export type ListResourceTemplatesResult = z.infer<typeof ListResourceTemplatesResultSchema>;
export type ReadResourceResult = z.infer<typeof ReadResourceResultSchema>;
export type InitializeResult = z.infer<typeof InitializeResultSchema>;
export type ServerCapabilities = InitializeResult['capabilities'];
export type Implementation = { name: string; version: string; title?: string };
export type Prompt = z.infer<typeof PromptSchema>;
export type ListPromptsResult = z.infer<typeof ListPromptsResultSchema>;
export type GetPromptResult = z.infer<typeof GetPromptResultSchema>;
export type CompleteResult = z.infer<typeof CompleteResultSchema>;
export type Completion = CompleteResult['completion'];
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;
export type ElicitResult = z.infer<typeof ElicitResultSchema>;
export type CreateMessageResult = z.infer<typeof CreateMessageResultSchema>;
/** `prompts/get`'s reference in `completion/complete`. */
export type PromptRef = { type: 'ref/prompt'; name: string };
export type ResourceTemplateRef = { type: 'ref/resource'; uri: string };

/** A server's `elicitation/create` params: `form` mode (a `requestedSchema`) or `url` mode. */
export interface ElicitRequest {
  mode?: 'form' | 'url';
  message: string;
  requestedSchema?: Record<string, unknown>;
  url?: string;
  elicitationId?: string;
  [key: string]: unknown;
}

/** A model's request to use a tool, inside a sampling message (2025-11-25). */
export interface ToolUseContent extends BlockExtras {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}
/** A tool's answer to a `tool_use`, inside a sampling message (2025-11-25). */
export interface ToolResultContent extends BlockExtras {
  type: 'tool_result';
  toolUseId: string;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}
/**
 * One block of a sampling message, narrowable on `type`: text, an image or audio, and since
 * 2025-11-25 a tool use or a tool result. As for {@link ContentBlock}, a block of a newer
 * revision still passes through at run time.
 */
export type SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent;
/** A message of a sampling request: one block, or (2025-11-25) several. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  content: SamplingContent | SamplingContent[];
  _meta?: Record<string, unknown>;
}

/** A server's `sampling/createMessage` params. */
export interface CreateMessageRequest {
  messages: SamplingMessage[];
  maxTokens?: number;
  systemPrompt?: string;
  [key: string]: unknown;
}

/** What a host handler knows about the server's request it answers. */
export interface HostRequestContext {
  /** The server's name (the client's `name` option). */
  server: string;
  /** Aborted when the request is cancelled (the call that caused it, or the server). */
  signal: AbortSignal;
  /** The tool call that caused the request, when known. */
  toolCall?: { name: string; arguments: object };
}

/** The host's answers to what a server asks of it (elicitation, sampling, roots). */
export interface HostHandlers {
  elicitation?: (request: ElicitRequest, ctx: HostRequestContext) => Promise<ElicitResult>;
  sampling?: (request: CreateMessageRequest, ctx: HostRequestContext) => Promise<CreateMessageResult>;
  roots?: (ctx: HostRequestContext) => Promise<Root[]>;
}

/** A list result's cache hints (2026-07-28): how long it stays fresh and for whom. */
export interface CacheHints {
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** A root the client offers to servers (`roots/list`). */
export interface Root {
  uri: string;
  name?: string;
}

/** One `notifications/progress` of a running call. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** A `notifications/message` log entry from a server. */
export interface LogMessage {
  level: string;
  logger?: string;
  data: unknown;
}

/** Per-request options; options always come last. */
export interface CallOptions {
  /** Time allowed for the answer, in ms. Default: the server's `timeout`, else 30000. */
  timeout?: number;
  /** Aborting it cancels the request (`notifications/cancelled`) and rejects with `cancelled`. */
  signal?: AbortSignal;
  /** Receives the server's progress notifications for this request. */
  onProgress?: (progress: Progress) => void;
  /** Each progress notification restarts the timeout. Default true. */
  resetTimeoutOnProgress?: boolean;
  /** Upper bound on the whole request in ms, however much progress arrives. Default: none. */
  maxTotalTimeout?: number;
  /**
   * When `timeout` and `maxTotalTimeout` start counting (a `performance.now()` value);
   * default: when the request is sent. The manager sets it to when a call began, so its
   * time-outs cover a server start too; progress still restarts the whole `timeout`.
   */
  startedAt?: number;
  /** Manager tool calls: cap on the result's text in bytes, overriding the manager's `maxResultBytes`. */
  maxResultBytes?: number;
}
