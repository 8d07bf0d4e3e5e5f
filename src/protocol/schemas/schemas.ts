import { z } from 'zod';
import type { ContentBlock } from '../types.js';

// Shapes of what MCP servers send back, checked at run time before a caller sees them.
// Objects are loose: a newer server may add fields, and we pass them through untouched.
// Content is checked for its shape (a `type` and the fields a client reads), not byte by byte.

const meta = z.record(z.string(), z.unknown()).optional();

const annotations = z.looseObject({}).optional();

export const ToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.string().optional() }),
  outputSchema: z.looseObject({}).optional(),
  annotations,
  _meta: meta,
});

export const ListToolsResultSchema = z.looseObject({
  tools: z.array(ToolSchema),
  nextCursor: z.string().optional(),
  _meta: meta,
});

const TextContent = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageContent = z.looseObject({ type: z.literal('image'), data: z.string(), mimeType: z.string() });
const AudioContent = z.looseObject({ type: z.literal('audio'), data: z.string(), mimeType: z.string() });
const ResourceLink = z.looseObject({ type: z.literal('resource_link'), uri: z.string(), name: z.string() });
const EmbeddedResource = z.looseObject({
  type: z.literal('resource'),
  resource: z.looseObject({ uri: z.string() }),
});
// A content type from a newer revision is passed through rather than failing the call.
const OtherContent = z.looseObject({ type: z.string() });

// Typed as the standard blocks so callers can narrow on `type`; unknown blocks still pass.
export const ContentBlockSchema = z.union([
  TextContent,
  ImageContent,
  AudioContent,
  ResourceLink,
  EmbeddedResource,
  OtherContent.refine((c) => !['text', 'image', 'audio', 'resource_link', 'resource'].includes(c.type), {
    message: 'content block is missing a field its type requires',
  }),
]) as unknown as z.ZodType<ContentBlock>;

export const CallToolResultSchema = z.looseObject({
  content: z.array(ContentBlockSchema).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  _meta: meta,
});

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a result is a tool result of text blocks that {@link CallToolResultSchema} would
 * take as it is: checked by hand in a fraction of zod's time, since most results are such.
 * False sends the result to the schema, which decides (and names what is wrong).
 */
export function isPlainCallToolResult(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { content, structuredContent, isError, _meta } = value;
  if (!Array.isArray(content)) return false;
  for (const block of content) if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
  return (structuredContent === undefined || isRecord(structuredContent)) && (isError === undefined || typeof isError === 'boolean') && (_meta === undefined || isRecord(_meta));
}

export const ResourceSchema = z.looseObject({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().optional(),
  annotations,
  _meta: meta,
});

export const ListResourcesResultSchema = z.looseObject({
  resources: z.array(ResourceSchema),
  nextCursor: z.string().optional(),
  _meta: meta,
});

export const ResourceTemplateSchema = z.looseObject({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  annotations,
  _meta: meta,
});

export const ListResourceTemplatesResultSchema = z.looseObject({
  resourceTemplates: z.array(ResourceTemplateSchema),
  nextCursor: z.string().optional(),
  _meta: meta,
});

const ResourceContentsSchema = z.union([
  z.looseObject({ uri: z.string(), mimeType: z.string().optional(), text: z.string() }),
  z.looseObject({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }),
]);

export const ReadResourceResultSchema = z.looseObject({
  contents: z.array(ResourceContentsSchema),
  _meta: meta,
});

export const InitializeResultSchema = z.looseObject({
  protocolVersion: z.string(),
  capabilities: z.looseObject({
    tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
    resources: z.looseObject({ subscribe: z.boolean().optional(), listChanged: z.boolean().optional() }).optional(),
    prompts: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
    logging: z.looseObject({}).optional(),
  }),
  serverInfo: z.looseObject({ name: z.string(), version: z.string(), title: z.string().optional() }),
  instructions: z.string().optional(),
  _meta: meta,
});

export const EmptyResultSchema = z.looseObject({ _meta: meta });

export const LogMessageParamsSchema = z.looseObject({
  level: z.string(),
  logger: z.string().optional(),
  data: z.unknown(),
});

export const PromptSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(z.looseObject({ name: z.string(), description: z.string().optional(), required: z.boolean().optional() })).optional(),
  _meta: meta,
});

export const ListPromptsResultSchema = z.looseObject({
  prompts: z.array(PromptSchema),
  nextCursor: z.string().optional(),
  _meta: meta,
});

const PromptContent = z.union([TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, OtherContent]);

export const GetPromptResultSchema = z.looseObject({
  description: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant']), content: PromptContent })),
  _meta: meta,
});

export const CompleteResultSchema = z.looseObject({
  completion: z.looseObject({
    values: z.array(z.string()),
    total: z.number().optional(),
    hasMore: z.boolean().optional(),
  }),
  _meta: meta,
});

/** What `server/discover` answers (2026-07-28); `serverInfo` may sit in the result's `_meta`. */
export const DiscoverResultSchema = z.looseObject({
  supportedVersions: z.array(z.string()),
  capabilities: InitializeResultSchema.shape.capabilities,
  serverInfo: z.looseObject({ name: z.string(), version: z.string(), title: z.string().optional() }).optional(),
  instructions: z.string().optional(),
  _meta: meta,
});

/** A 2026-era result's envelope: every result says what kind it is. */
export const ResultTypeSchema = z.looseObject({
  resultType: z.string(),
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.unknown().optional() })).optional(),
  requestState: z.string().optional(),
  ttlMs: z.number().optional(),
  cacheScope: z.string().optional(),
});

export const ElicitResultSchema = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});

export const CreateMessageResultSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.unknown(),
  model: z.string(),
  stopReason: z.string().optional(),
});
