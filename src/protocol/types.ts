import type { z } from 'zod';
import type {
  CallToolResultSchema,
  InitializeResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  ToolSchema,
} from './schemas.js';

/** Protocol revisions this client speaks, newest first; the first is offered. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

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
  /** Manager tool calls: cap on the result's text in bytes, overriding the manager's `maxResultBytes`. */
  maxResultBytes?: number;
}
