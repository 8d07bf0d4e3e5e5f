import { McpError, serverLabel } from '../errors.js';
import { mustBe } from '../util/check.js';
import type { Framing } from '../transport/framing/framing.js';
import type { RemoteChannelConfig } from '../transport/http/create-http-channel.js';
import type { ProcessSpec } from '../transport/stdio/server-process.js';

/** How to start one stdio server: the per-server part of the config file. */
export interface StdioServerConfig extends Pick<ProcessSpec, 'command' | 'args' | 'env' | 'cwd' | 'inheritEnv' | 'sandbox'> {
  /** `"stdio"` or absent. */
  type?: 'stdio';
  /** Wire framing. Default `"newline"` (MCP stdio). */
  framing?: Framing;
  /** Per-request timeout in ms, the handshake included. Default 30000. */
  timeout?: number;
}

/** How to reach one remote server: Streamable HTTP (either era) or the legacy HTTP+SSE transport. */
export interface RemoteServerConfig {
  /** `"http"` (also `"streamable-http"`): Streamable HTTP; `"sse"`: the HTTP+SSE transport of 2024-11-05. */
  type: 'http' | 'streamable-http' | 'sse';
  /** An http or https URL, used as given (no `${VAR}` expansion at this level). */
  url: string;
  /** Sent on every request. */
  headers?: Record<string, string>;
  /** Per-request timeout in ms, the handshake included. Default 30000. */
  timeout?: number;
}

/** One server, as `McpClient.connect` takes it: a config file's entry without the manager's fields. */
export type ServerConfig = StdioServerConfig | RemoteServerConfig;

const REMOTE_TYPES: Readonly<Record<string, 'http' | 'sse'>> = { http: 'http', 'streamable-http': 'http', streamableHttp: 'http', sse: 'sse' };

/**
 * The remote channel an entry asks for, checked; undefined for a stdio entry (`type`
 * absent or `"stdio"`), which the process layer checks. Throws `invalid-config` naming
 * the field and the value.
 */
export function remoteChannelConfig(config: ServerConfig, name: string | undefined): RemoteChannelConfig | undefined {
  const fail = (field: string, expected: string, value: unknown): never => {
    throw new McpError('invalid-config', `${serverLabel(name)}${mustBe(field, expected, value)}`, { server: name, phase: 'config' });
  };
  if (typeof config !== 'object' || config === null) return fail('config', 'an object', config);
  const type: unknown = config.type;
  if (type === undefined || type === 'stdio') return undefined;
  if (typeof type !== 'string' || !Object.hasOwn(REMOTE_TYPES, type)) return fail('type', '"stdio", "http", "streamable-http" or "sse"', type);
  const { url, headers } = config as RemoteServerConfig;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) fail('url', 'an http or https URL', url);
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers) || !Object.values(headers).every((v) => typeof v === 'string'))) {
    fail('headers', 'an object of strings', headers);
  }
  return { transport: REMOTE_TYPES[type], url: (parsed as URL).href, ...(headers === undefined ? {} : { headers }) };
}

