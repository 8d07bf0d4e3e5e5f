import type { z } from 'zod';
import { McpError, serverLabel } from '../errors.js';
import type { Channel } from '../transport/channel.js';
import { type ConnectOptions, DISCOVER_PROBE_MS, type Negotiated } from './client-options.js';
import type { RequestEngine } from './engine/engine.js';
import { decodeModernResult, SERVER_INFO_META_KEY, UNSUPPORTED_PROTOCOL_VERSION, withEnvelope } from './eras/modern.js';
import type { HostRequests } from './host-requests.js';
import { resultSchemas } from './schemas/lazy-schemas.js';
import type { InitializeResultSchema } from './schemas/schemas.js';
import { ALL_PROTOCOL_VERSIONS, type Implementation, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from './types.js';
import { mustBe } from '../util/check.js';

/** The start of a client's session: which era and revision the server speaks, and what it says of itself. */
export class Handshake {
  constructor(
    private readonly engine: RequestEngine,
    private readonly channel: Channel,
    private readonly host: HostRequests,
    private readonly options: ConnectOptions,
    private readonly name: string | undefined,
  ) {}

  /**
   * Era negotiation. On stdio, `initialize` goes first and the 2026 era is tried only when
   * the server refuses it — SPEC's second strategy, chosen because it never costs a
   * process: a legacy server (most of them, and some exit on any request before
   * `initialize`) sees exactly the handshake it expects, no sibling process runs twice
   * (with its locks, ports and side effects), and a 2026-only server answers `initialize`
   * with an error naming its versions (the 2026-07-28 versioning page asks it to; the SDK
   * v2 stdio entry does, and keeps the connection open for `server/discover`). A dual-era
   * server therefore runs in the legacy era on stdio unless `protocolVersion` or `era`
   * says 2026. Where no process can be lost (any other channel), or with the `era: '2026'`
   * hint, `server/discover` goes first, bounded by {@link DISCOVER_PROBE_MS}, and any
   * error that is not a recognized modern one falls back to `initialize`.
   */
  async negotiate(): Promise<Negotiated> {
    const wanted = this.options.protocolVersion ?? 'auto';
    if (wanted !== 'auto' && !(ALL_PROTOCOL_VERSIONS as readonly string[]).includes(wanted)) {
      throw new McpError(
        'invalid-config',
        `${serverLabel(this.name)}the option ${mustBe('protocolVersion', `"auto" or one of ${ALL_PROTOCOL_VERSIONS.join(', ')}`, wanted)}`,
        { server: this.name, phase: 'config' },
      );
    }
    if (wanted === MODERN_PROTOCOL_VERSION) return this.discover(this.engine.defaultTimeout);
    if (wanted !== 'auto') return this.initialize(wanted);
    // A channel may know which era its peer prefers (the pool daemon speaks both): that beats the cache's hint.
    const hint = this.channel.info.preferredEra ?? this.options.era;
    const modernFirst = hint === '2026' || (hint === undefined && this.channel.info.transport !== 'stdio');
    if (modernFirst) {
      try {
        return await this.discover(Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout / 2));
      } catch (error) {
        if (!legacyVerdict(error) && !offersLegacy(error) && !notADiscoverAnswer(error)) throw error;
      }
      return this.initialize(LATEST_PROTOCOL_VERSION);
    }
    try {
      return await this.initialize(LATEST_PROTOCOL_VERSION);
    } catch (refused) {
      if (!(refused instanceof McpError) || refused.code !== 'rpc-error') throw refused;
      try {
        return await this.discover(this.engine.defaultTimeout);
      } catch (error) {
        // Not a 2026 server either: the initialize refusal is what explains it.
        throw legacyVerdict(error) ? refused : error;
      }
    }
  }

  private async initialize(offered: string): Promise<Negotiated> {
    const result = await this.engine.request<z.infer<typeof InitializeResultSchema>>(
      {
        method: 'initialize',
        params: { protocolVersion: offered, capabilities: this.host.clientCapabilities(), clientInfo: this.host.clientInfo },
        schema: resultSchemas().InitializeResultSchema,
        phase: 'initialize',
        silentCancel: true,
      },
      { timeout: Infinity },
    );
    const insisted = this.options.protocolVersion !== undefined && this.options.protocolVersion !== 'auto';
    const accepted = insisted ? [offered] : (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]);
    if (!accepted.includes(result.protocolVersion)) {
      throw this.engine.errors.unsupportedVersion(result.protocolVersion, offered, insisted ? [offered] : SUPPORTED_PROTOCOL_VERSIONS);
    }
    this.channel.setProtocolVersion(result.protocolVersion);
    await this.engine.notify('notifications/initialized');
    return { era: 'legacy', protocolVersion: result.protocolVersion, serverInfo: result.serverInfo, capabilities: result.capabilities, instructions: result.instructions };
  }

  /**
   * `server/discover`; a server that answers but does not speak 2026-07-28 is a `protocol-error`.
   * A refusal (-32022) whose `supported` list names the revision we speak is retried once with
   * it (SEP-2575: retry with a supported version): a server that lists it but refused this
   * request (a gateway that rewrote the header, a server restarted into that revision) is
   * still a 2026 server, not a reason to give up or to fall back to `initialize`.
   */
  private async discover(timeout: number, retried = false): Promise<Negotiated> {
    let raw: unknown;
    try {
      raw = await this.engine.request(
        { method: 'server/discover', params: withEnvelope({}, this.host.clientInfo, this.host.clientCapabilities()), phase: 'discover', silentCancel: true },
        { timeout },
      );
    } catch (error) {
      if (error instanceof McpError && error.rpc?.code === UNSUPPORTED_PROTOCOL_VERSION) {
        if (!retried && namesModern(error.rpc.data)) return this.discover(timeout, true);
        throw this.unsupportedModern(error.rpc.data);
      }
      throw error;
    }
    const decoded = decodeModernResult(this.name, 'discover', 'server/discover', raw);
    if (decoded.kind !== 'complete') throw new McpError('protocol-error', `${serverLabel(this.name)}server/discover asked for input`, { server: this.name, phase: 'discover' });
    const parsed = resultSchemas().DiscoverResultSchema.safeParse(decoded.result);
    if (!parsed.success) throw this.engine.errors.fromIssues({ label: 'server/discover', phase: 'discover' }, parsed.error);
    const result = parsed.data;
    if (!result.supportedVersions.includes(MODERN_PROTOCOL_VERSION)) throw this.unsupportedModern({ supported: result.supportedVersions });
    const metaInfo = (result._meta?.[SERVER_INFO_META_KEY] ?? undefined) as Implementation | undefined;
    this.channel.setProtocolVersion(MODERN_PROTOCOL_VERSION);
    return {
      era: '2026',
      protocolVersion: MODERN_PROTOCOL_VERSION,
      serverInfo: result.serverInfo ?? metaInfo ?? { name: 'unknown', version: '0.0.0' },
      capabilities: result.capabilities,
      instructions: result.instructions,
    };
  }

  private unsupportedModern(data: unknown): McpError {
    const supported = (data as { supported?: unknown } | undefined)?.supported;
    const list = Array.isArray(supported) ? supported.map(String).join(', ') : 'none named';
    const message = `${serverLabel(this.name)}the server speaks protocol versions ${list}; lazy-mcp speaks ${ALL_PROTOCOL_VERSIONS.join(', ')}`;
    // The list travels in `rpc.data.supported`, so a modern-first negotiation can still fall back to a legacy revision it names.
    const rpc = { code: UNSUPPORTED_PROTOCOL_VERSION, message: 'Unsupported protocol version', data: { supported: Array.isArray(supported) ? supported.map(String) : [] } };
    return new McpError('protocol-error', message, { server: this.name, phase: 'discover', rpc });
  }
}


/** Whether a failed probe says "legacy server": any answer or silence that is not a recognized modern error. */
function legacyVerdict(error: unknown): boolean {
  if (!(error instanceof McpError)) return false;
  if (error.code === 'timeout') return true;
  return error.code === 'rpc-error' && error.rpc?.code !== UNSUPPORTED_PROTOCOL_VERSION;
}

/** Whether a -32022 refusal's `supported` list names the 2026 revision we speak. */
function namesModern(data: unknown): boolean {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_PROTOCOL_VERSION);
}

/** Whether a refused `server/discover` names a legacy revision we speak: a server to reach through `initialize`. */
function offersLegacy(error: unknown): boolean {
  if (!(error instanceof McpError) || error.rpc?.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const supported = (error.rpc.data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.some((v) => (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(v));
}

/**
 * Whether a `server/discover` probe got a success answer that is no discover result (no
 * `resultType`, no `supportedVersions`): a lenient legacy server answering any method.
 */
function notADiscoverAnswer(error: unknown): boolean {
  return error instanceof McpError && error.code === 'protocol-error' && error.phase === 'discover' && error.rpc === undefined;
}
