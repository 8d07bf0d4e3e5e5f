import { McpError } from '../errors.js';
import type { ServerConfig } from '../protocol/client.js';
import { expandVars, UnsetVariableError } from './expand-vars.js';
import type { HealthCheck } from './health.js';

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
  /** Probe the running server every `intervalMs` (each probe allowed `timeoutMs`, default `intervalMs`) and restart it when it stops answering. Default: off. */
  healthCheck?: HealthCheck;
}

/** The whole file: `{ "mcpServers": { … } }` or VS Code's `{ "servers": { … } }`. */
export type McpConfig = { mcpServers: Record<string, ServerEntryConfig> } | { servers: Record<string, ServerEntryConfig> };

/** A stdio server entry after validation and `${VAR}` expansion. */
export interface ResolvedServer extends ServerConfig {
  idleTimeout?: number;
  startup: 'lazy' | 'eager';
  healthCheck?: HealthCheck;
}

/** What the config says about one server: runnable, or why not. */
export type ServerEntry =
  | { name: string; kind: 'stdio'; config: ResolvedServer }
  | { name: string; kind: 'disabled'; config: ResolvedServer }
  | { name: string; kind: 'unsupported'; error: McpError; transport: 'http' | 'sse'; url?: string }
  | { name: string; kind: 'invalid'; error: McpError };

const REMOTE_TYPES = new Set(['http', 'sse', 'streamable-http', 'streamableHttp']);

/**
 * Reads a config (object or JSON text). A malformed file as a whole throws
 * `invalid-config`; a malformed entry only marks that server.
 */
export function parseConfig(input: unknown, hostEnv: Record<string, string | undefined> = process.env): ServerEntry[] {
  let config = input;
  if (typeof input === 'string') {
    try {
      config = JSON.parse(input);
    } catch (error) {
      throw new McpError('invalid-config', `config is not valid JSON: ${(error as Error).message}`, { phase: 'config', cause: error });
    }
  }
  const servers = isObject(config) ? (config.mcpServers ?? config.servers) : undefined;
  if (!isObject(servers)) {
    throw new McpError('invalid-config', 'config must be an object with "mcpServers" (or VS Code\'s "servers") mapping names to server entries', {
      phase: 'config',
    });
  }
  return Object.entries(servers).map(([name, entry]) => resolveEntry(name, entry, hostEnv));
}

function resolveEntry(name: string, entry: unknown, hostEnv: Record<string, string | undefined>): ServerEntry {
  try {
    if (!isObject(entry)) throw new EntryError('', `must be an object, got ${describe(entry)}`);
    const type = optional(entry, 'type', 'string');
    const expand = (field: string, value: string) => {
      try {
        return expandVars(value, hostEnv);
      } catch (error) {
        if (error instanceof UnsetVariableError) throw new EntryError(field, error.message);
        throw error;
      }
    };
    if ((type !== undefined && REMOTE_TYPES.has(type)) || (type === undefined && entry.command === undefined && entry.url !== undefined)) {
      const rawUrl = optional(entry, 'url', 'string');
      const url = rawUrl === undefined ? undefined : expand('url', rawUrl);
      return {
        name,
        kind: 'unsupported',
        transport: type === 'sse' ? 'sse' : 'http',
        ...(url === undefined ? {} : { url }),
        error: new McpError(
          'unsupported-transport',
          `server ${JSON.stringify(name)}: transport ${JSON.stringify(type ?? 'http')}${url ? ` (${url})` : ''} is not supported; lazy-mcp runs stdio servers only`,
          { server: name, phase: 'config' },
        ),
      };
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
    const health = healthCheck(entry);
    const config: ResolvedServer = {
      command: expand('command', command),
      args,
      env,
      ...(cwd === undefined ? {} : { cwd: expand('cwd', cwd) }),
      ...(framing === undefined ? {} : { framing }),
      timeout: positive(entry, 'timeout'),
      idleTimeout: positive(entry, 'idleTimeout'),
      inheritEnv: optional(entry, 'inheritEnv', 'boolean') ?? false,
      startup,
      ...(health === undefined ? {} : { healthCheck: health }),
    };
    const disabled = optional(entry, 'disabled', 'boolean') ?? false;
    return { name, kind: disabled ? 'disabled' : 'stdio', config };
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

class EntryError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const shown = JSON.stringify(value);
  return `${shown === undefined ? String(value) : shown.length > 60 ? `${shown.slice(0, 60)}…` : shown} (${type})`;
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
