import { McpError } from '../../errors.js';
import { shown as describe } from '../../util/check.js';
import type { StdioServerConfig } from '../../protocol/client.js';
import type { OAuthConfig } from '../../transport/http/oauth/client-registration.js';
import type { SandboxPolicy } from '../../transport/stdio/sandbox/policy.js';
import { findSandboxTool } from '../../transport/stdio/sandbox/tool.js';
import { signingKeyProblem } from '../../transport/http/oauth/signing-key.js';
import { type ConfigSource, parseConfigText } from './config-text.js';
import { withoutUserinfo } from '../../transport/http/shown-url.js';
import { type ExpansionContext, ExpansionError, expandVars, inputsOf } from './expand-vars.js';
import { isSandboxProblem, sandboxPolicy } from './sandbox-config.js';
import { type ToolFilter, toolFilterProblem } from '../catalog/tool-filter.js';
import type { HealthCheck } from '../pool/health.js';
import { DEFAULT_INSTANCE_IDLE_MS, fillPlaceholders, type InstanceSpec, instanceSpec, isFieldProblem, type PlaceholderFields } from '../principals/entry-fields.js';

/** One server entry as users write it (Claude Desktop, Cursor, Claude Code, VS Code). */
export interface ServerEntryConfig {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  /** Per-request timeout in ms, `initialize` included. Default 30000. */
  timeout?: number;
  framing?: 'newline' | 'content-length';
  disabled?: boolean;
  /** Stop the server after this many ms with nothing in flight. Default: never. */
  idleTimeout?: number;
  inheritEnv?: boolean;
  /** `"lazy"` (default): start on first use; `"eager"`: start in the background at construction. */
  startup?: 'lazy' | 'eager';
  /** Which of the server's tools are listed, searched and callable (exact raw names or `*` globs). Default: all. */
  tools?: ToolFilter;
  /** http / sse: sent on every request, `${VAR}` expanded. */
  headers?: Record<string, string>;
  /** http / sse: how to obtain a token when the server asks for one. */
  oauth?: OAuthConfig;
  /** Probe the running server every `intervalMs` (each probe allowed `timeoutMs`, default `intervalMs`) and restart it when it stops answering. Default: off. */
  healthCheck?: HealthCheck;
  /**
   * stdio only: run the server in a sandbox. `true`: the system read-only, its own
   * package, a private /tmp and home, no network. An object adds `read` / `write` paths
   * (`~` and `${workspaceFolder}` expand), `network: true` and host variables by name (`env`).
   */
  sandbox?: boolean | { read?: string[]; write?: string[]; network?: boolean; env?: string[] };
  /** One instance per principal (also implied by a `${principal:NAME}` in env, args, headers or url). */
  perPrincipal?: boolean;
  /** `"shared"` (default), `"per-principal"` or `"per-session"`: who an instance of the server is for. */
  instances?: 'shared' | 'per-principal' | 'per-session';
  /** Per-principal or per-session servers: most instances alive at once (least recently used stopped first). Default 32. */
  maxInstances?: number;
}

/** An entry's `oauth`, as the OAuth client reads it. */
export type { OAuthConfig };

/** The whole file: `{ "mcpServers": { … } }` or VS Code's `{ "servers": { … } }`. */
export type McpConfig = { mcpServers: Record<string, ServerEntryConfig> } | { servers: Record<string, ServerEntryConfig> };

/** A stdio server entry after validation and `${VAR}` expansion. */
export interface ResolvedServer extends StdioServerConfig {
  /** Paths made absolute, every field filled. */
  sandbox?: SandboxPolicy;
  idleTimeout?: number;
  startup: 'lazy' | 'eager';
  tools?: ToolFilter;
  healthCheck?: HealthCheck;
  /** Set when the server runs one instance per principal or per session. */
  instances?: InstanceSpec;
}

/** A remote server entry (`type` `"http"` / `"streamable-http"` or `"sse"`) after validation and `${VAR}` expansion. */
export interface ResolvedRemoteServer {
  /** `http`: Streamable HTTP (either era); `sse`: the 2024-11-05 HTTP+SSE transport. */
  transport: 'http' | 'sse';
  /** An http or https URL. */
  url: string;
  /** `url` as status and messages show it: values that came from `${VAR}` as `***`, userinfo as `***`. */
  shownUrl: string;
  headers: Record<string, string>;
  oauth?: OAuthConfig;
  timeout?: number;
  idleTimeout?: number;
  startup: 'lazy' | 'eager';
  tools?: ToolFilter;
  healthCheck?: HealthCheck;
  /** Set when the server runs one instance per principal or per session. */
  instances?: InstanceSpec;
}

/** What the config says about one server: runnable, or why not. */
export type ServerEntry =
  | { name: string; kind: 'stdio'; config: ResolvedServer }
  | { name: string; kind: 'http'; config: ResolvedRemoteServer }
  | { name: string; kind: 'disabled'; config: ResolvedServer | ResolvedRemoteServer }
  | { name: string; kind: 'unsupported'; error: McpError }
  | { name: string; kind: 'invalid'; error: McpError };

const REMOTE_TYPES = new Set(['http', 'sse', 'streamable-http', 'streamableHttp']);

/**
 * Reads a config (object or JSON text). A malformed file as a whole throws
 * `invalid-config`; a malformed entry only marks that server.
 */
export function parseConfig(input: unknown, hostEnv: Record<string, string | undefined> = process.env, source: ConfigSource = {}): ServerEntry[] {
  // Text may be JSON with comments (VS Code's files); a syntax error names its line and column.
  const config = typeof input === 'string' ? parseConfigText(input) : input;
  const servers = isObject(config) ? (config.mcpServers ?? config.servers) : undefined;
  if (!isObject(servers)) {
    throw new McpError('invalid-config', 'config must be an object with "mcpServers" (or VS Code\'s "servers") mapping names to server entries', {
      phase: 'config',
    });
  }
  const context: ExpansionContext = { ...source, inputs: inputsOf(config) };
  return Object.entries(servers).map(([name, entry]) => resolveEntry(name, entry, hostEnv, context));
}

function resolveEntry(name: string, entry: unknown, hostEnv: Record<string, string | undefined>, context: ExpansionContext): ServerEntry {
  try {
    if (!isObject(entry)) throw new EntryError('', `must be an object, got ${describe(entry)}`);
    const type = optional(entry, 'type', 'string');
    const expand = (field: string, value: string) => {
      try {
        return expandVars(value, hostEnv, context);
      } catch (error) {
        if (error instanceof ExpansionError) throw new EntryError(field, error.message);
        throw error;
      }
    };
    if ((type !== undefined && REMOTE_TYPES.has(type)) || (type === undefined && entry.command === undefined && entry.url !== undefined)) {
      // The same expansion with every variable's value hidden: what the URL may be shown as.
      const hidden = (value: string) => expandVars(value, new Proxy(hostEnv, { get: (env, key) => (typeof key === 'string' && env[key] ? '***' : env[key as string]) }), context);
      return resolveRemote(name, entry, type === 'sse' ? 'sse' : 'http', expand, hidden);
    }
    if (type !== undefined && type !== 'stdio') throw new EntryError('type', `must be "stdio", "http", "sse" or "streamable-http", got ${describe(type)}`);
    const command = optional(entry, 'command', 'string');
    if (command === undefined || command.trim() === '') throw new EntryError('command', 'is required for a stdio server');
    const args = optionalArray(entry, 'args').map((arg, i) => expand(`args[${i}]`, arg));
    const env = Object.fromEntries(Object.entries(optionalStringMap(entry, 'env')).map(([k, v]) => [k, expand(`env.${k}`, v)]));
    const cwd = optional(entry, 'cwd', 'string');
    const framing = optional(entry, 'framing', 'string');
    if (framing !== undefined && framing !== 'newline' && framing !== 'content-length') {
      throw new EntryError('framing', `must be "newline" or "content-length", got ${describe(framing)}`);
    }
    const startup = optional(entry, 'startup', 'string') ?? 'lazy';
    if (startup !== 'lazy' && startup !== 'eager') throw new EntryError('startup', `must be "lazy" or "eager", got ${describe(startup)}`);
    const tools = entry.tools;
    const toolsProblem = tools === undefined ? undefined : toolFilterProblem(tools);
    if (toolsProblem) throw new EntryError(toolsProblem.field, toolsProblem.message);
    const health = healthCheck(entry);
    const sandbox = sandboxPolicy(entry.sandbox, expand, hostEnv.HOME);
    if (isSandboxProblem(sandbox)) throw new EntryError(sandbox.field, sandbox.message);
    const inheritEnv = optional(entry, 'inheritEnv', 'boolean') ?? false;
    // The whole host environment would carry every token into the sandbox.
    if (sandbox && inheritEnv) throw new EntryError('inheritEnv', 'cannot be true with "sandbox": list the host variables the server needs in sandbox.env');
    const config: ResolvedServer = {
      command: expand('command', command),
      args,
      env,
      ...(cwd === undefined ? {} : { cwd: expand('cwd', cwd) }),
      ...(framing === undefined ? {} : { framing }),
      timeout: positive(entry, 'timeout'),
      idleTimeout: positive(entry, 'idleTimeout'),
      inheritEnv,
      startup,
      ...(tools === undefined ? {} : { tools: tools as ToolFilter }),
      ...(health === undefined ? {} : { healthCheck: health }),
      ...(sandbox === undefined ? {} : { sandbox }),
    };
    withInstances(config, entry, { env, args, refused: { command, cwd } });
    const disabled = optional(entry, 'disabled', 'boolean') ?? false;
    if (disabled) return { name, kind: 'disabled', config };
    if (sandbox !== undefined) {
      // A sandbox that cannot be made here makes the entry invalid: it is never run without one.
      try {
        findSandboxTool(name, hostEnv.PATH ?? '');
      } catch (error) {
        if (error instanceof McpError) return { name, kind: 'invalid', error };
        throw error;
      }
    }
    return { name, kind: 'stdio', config };
  } catch (error) {
    if (!(error instanceof EntryError)) throw error;
    const where = error.field ? `field "${error.field}" ` : 'entry ';
    return {
      name,
      kind: 'invalid',
      error: new McpError('invalid-config', `server ${JSON.stringify(name)}: config ${where}${error.message}`, { server: name, phase: 'config' }),
    };
  }
}

/** A `type: "http" | "streamable-http" | "sse"` entry (or one with only a `url`). */
function resolveRemote(
  name: string,
  entry: Record<string, unknown>,
  transport: 'http' | 'sse',
  expand: (field: string, value: string) => string,
  hidden: (value: string) => string,
): ServerEntry {
  if (entry.sandbox !== undefined && entry.sandbox !== false) {
    throw new EntryError('sandbox', `applies to stdio servers only: an ${transport} server runs elsewhere, got ${describe(entry.sandbox)}`);
  }
  const rawUrl = optional(entry, 'url', 'string');
  if (rawUrl === undefined || rawUrl.trim() === '') throw new EntryError('url', `is required for a${transport === 'sse' ? 'n sse' : 'n http'} server`);
  const expandedUrl = expand('url', rawUrl);
  // A `${principal:NAME}` is filled per instance: the URL must be valid with any value there.
  const url = httpUrl('url', fillPlaceholders(expandedUrl, (n) => n));
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(optionalStringMap(entry, 'headers'))) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) throw new EntryError(`headers.${key}`, 'is not a valid HTTP header name');
    const expanded = expand(`headers.${key}`, value);
    if (/[\r\n\0]/.test(expanded)) throw new EntryError(`headers.${key}`, 'must not contain line breaks or NUL');
    headers[key] = expanded;
  }
  const oauth = entry.oauth === undefined ? undefined : resolveOAuth(entry.oauth);
  const startup = optional(entry, 'startup', 'string') ?? 'lazy';
  if (startup !== 'lazy' && startup !== 'eager') throw new EntryError('startup', `must be "lazy" or "eager", got ${describe(startup)}`);
  const timeout = positive(entry, 'timeout');
  const idleTimeout = positive(entry, 'idleTimeout');
  const tools = entry.tools;
  const toolsProblem = tools === undefined ? undefined : toolFilterProblem(tools);
  if (toolsProblem) throw new EntryError(toolsProblem.field, toolsProblem.message);
  const health = healthCheck(entry);
  const config: ResolvedRemoteServer = {
    transport,
    url,
    shownUrl: withoutUserinfo(fillPlaceholders(hidden(rawUrl), () => '***')),
    headers,
    ...(oauth === undefined ? {} : { oauth }),
    ...(timeout === undefined ? {} : { timeout }),
    ...(idleTimeout === undefined ? {} : { idleTimeout }),
    ...(tools === undefined ? {} : { tools: tools as ToolFilter }),
    ...(health === undefined ? {} : { healthCheck: health }),
    startup,
  };
  withInstances(config, entry, { headers, url: expandedUrl });
  const disabled = optional(entry, 'disabled', 'boolean') ?? false;
  return disabled ? { name, kind: 'disabled', config } : { name, kind: 'http', config };
}

function resolveOAuth(value: unknown): OAuthConfig {
  if (!isObject(value)) throw new EntryError('oauth', `must be an object, got ${describe(value)}`);
  const known = new Set(['clientId', 'clientSecret', 'clientMetadataUrl', 'scopes', 'redirectUri', 'grant', 'privateKey', 'signingAlgorithm']);
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new EntryError(`oauth.${key}`, `is not an oauth field (${[...known].join(', ')})`);
  }
  const field = (key: string) => {
    const item = value[key];
    if (item !== undefined && (typeof item !== 'string' || item === '')) throw new EntryError(`oauth.${key}`, `must be a non-empty string, got ${describe(item)}`);
    return item as string | undefined;
  };
  const clientId = field('clientId');
  const clientSecret = field('clientSecret');
  const clientMetadataUrl = field('clientMetadataUrl');
  const redirectUri = field('redirectUri');
  if (clientSecret !== undefined && clientId === undefined) throw new EntryError('oauth.clientSecret', 'needs oauth.clientId');
  if (clientMetadataUrl !== undefined && new URL(httpUrl('oauth.clientMetadataUrl', clientMetadataUrl)).protocol !== 'https:') {
    throw new EntryError('oauth.clientMetadataUrl', `must be an https URL, got ${describe(clientMetadataUrl)}`);
  }
  if (redirectUri !== undefined) httpUrl('oauth.redirectUri', redirectUri);
  const scopes = value.scopes === undefined ? undefined : optionalArray({ 'oauth.scopes': value.scopes }, 'oauth.scopes');
  scopes?.forEach((scope, i) => {
    if (scope === '' || /\s/.test(scope)) throw new EntryError(`oauth.scopes[${i}]`, `must be one scope without spaces, got ${describe(scope)}`);
  });
  const grant = field('grant');
  const privateKey = field('privateKey');
  const signingAlgorithm = field('signingAlgorithm');
  const config: OAuthConfig = {
    ...(clientId === undefined ? {} : { clientId }),
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(redirectUri === undefined ? {} : { redirectUri }),
    ...(grant === undefined ? {} : { grant: grant as OAuthConfig['grant'] }),
    ...(privateKey === undefined ? {} : { privateKey }),
    ...(signingAlgorithm === undefined ? {} : { signingAlgorithm }),
  };
  if (grant !== undefined && grant !== 'authorization_code' && grant !== 'client_credentials') {
    throw new EntryError('oauth.grant', `must be "authorization_code" or "client_credentials", got ${describe(grant)}`);
  }
  if (grant === 'client_credentials' && (clientId === undefined || (clientSecret === undefined && privateKey === undefined))) {
    throw new EntryError('oauth.grant', 'is "client_credentials", which needs oauth.clientId and oauth.clientSecret or oauth.privateKey');
  }
  if (privateKey !== undefined && clientId === undefined) throw new EntryError('oauth.privateKey', 'needs oauth.clientId');
  if (signingAlgorithm !== undefined && privateKey === undefined) throw new EntryError('oauth.signingAlgorithm', 'needs oauth.privateKey');
  if (privateKey !== undefined) {
    const problem = signingKeyProblem(privateKey, signingAlgorithm);
    if (problem) throw new EntryError(problem.startsWith('signingAlgorithm') ? 'oauth.signingAlgorithm' : 'oauth.privateKey', problem.replace(/^\w+ /, ''));
  }
  return config;
}

/** Marks an entry that runs per principal or per session, whose idle instances stop by default. */
function withInstances(config: ResolvedServer | ResolvedRemoteServer, entry: Record<string, unknown>, fields: PlaceholderFields): void {
  let spec: InstanceSpec | undefined;
  try {
    spec = instanceSpec(entry, fields);
  } catch (error) {
    if (isFieldProblem(error)) throw new EntryError(error.field, error.message);
    throw error;
  }
  if (spec === undefined) return;
  config.instances = spec;
  config.idleTimeout ??= DEFAULT_INSTANCE_IDLE_MS;
}

/** The value as an absolute http(s) URL, normalised. */
function httpUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EntryError(field, `must be an absolute http or https URL, got ${describe(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EntryError(field, `must be an http or https URL, got ${describe(value)}`);
  return url.href;
}

class EntryError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


function optional<T extends 'string' | 'boolean' | 'number'>(
  entry: Record<string, unknown>,
  field: string,
  type: T,
): (T extends 'string' ? string : T extends 'boolean' ? boolean : number) | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (typeof value !== type) throw new EntryError(field, `must be a ${type}, got ${describe(value)}`);
  return value as never;
}

function positive(entry: Record<string, unknown>, field: string): number | undefined {
  const value = optional(entry, field, 'number');
  if (value !== undefined && !(value > 0 && Number.isFinite(value))) {
    throw new EntryError(field, `must be a positive number of milliseconds, got ${describe(value)}`);
  }
  return value;
}

function healthCheck(entry: Record<string, unknown>): HealthCheck | undefined {
  const value = entry.healthCheck;
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new EntryError('healthCheck', `must be an object { intervalMs, timeoutMs? }, got ${describe(value)}`);
  try {
    const intervalMs = positive(value, 'intervalMs');
    if (intervalMs === undefined) throw new EntryError('intervalMs', 'is required when healthCheck is given');
    const timeoutMs = positive(value, 'timeoutMs');
    return { intervalMs, ...(timeoutMs === undefined ? {} : { timeoutMs }) };
  } catch (error) {
    if (error instanceof EntryError) throw new EntryError(`healthCheck.${error.field}`, error.message);
    throw error;
  }
}

function optionalArray(entry: Record<string, unknown>, field: string): string[] {
  const value = entry[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new EntryError(field, `must be an array of strings, got ${describe(value)}`);
  value.forEach((item, i) => {
    if (typeof item !== 'string') throw new EntryError(`${field}[${i}]`, `must be a string, got ${describe(item)}`);
  });
  return value;
}

function optionalStringMap(entry: Record<string, unknown>, field: string): Record<string, string> {
  const value = entry[field];
  if (value === undefined) return {};
  if (!isObject(value)) throw new EntryError(field, `must be an object of strings, got ${describe(value)}`);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new EntryError(`${field}.${key}`, `must be a string, got ${describe(item)}`);
  }
  return value as Record<string, string>;
}
