import { McpError } from '../../errors.js';
import { askingHandlers } from '../../gateway/asking-handlers.js';
import type { McpClient, RequestOptions } from '../../protocol/client.js';
import { type IncomingRequestContext, RequestEngine } from '../../protocol/engine/engine.js';
import { type HostHandlers, type HostRequestContext, LATEST_PROTOCOL_VERSION, type Progress, type PromptRef, type ResourceTemplateRef, type Root, SUPPORTED_PROTOCOL_VERSIONS } from '../../protocol/types.js';
import type { RequestId } from '../../transport/channel.js';
import type { AttachedSession, SharedServer } from './shared-server.js';
import type { SocketChannel } from './socket-channel.js';
import { CLOSING_NOTE, STDERR_NOTE, toWire } from './wire.js';

/** A server's question may wait on a person: an hour at most, unless the call ends first. */
const ASK_TIMEOUT_MS = 3_600_000;

/**
 * One client's session of one shared server, on the daemon: the MCP server half over the
 * client's socket. The handshake is answered from the running server's own; requests are
 * relayed to the shared client with this session as their caller, so a question the
 * server asks about a call (elicitation, sampling, roots) comes back here, and only here;
 * cancellation and progress follow the relayed request. The client keeps its own
 * time-outs: the daemon adds none.
 */
export class DaemonSession implements AttachedSession {
  readonly engine: RequestEngine;
  /** What the client declared in `initialize`: it is asked only that. */
  private declared: { elicitation?: unknown; sampling?: unknown; roots?: unknown } = {};
  private initialized = false;
  /** Tool calls in flight, by the arguments object a question's context names: which request it is about. */
  private readonly callsByArgs = new Map<object, RequestId>();
  private readonly uris = new Set<string>();
  private readonly handlers: HostHandlers;

  constructor(
    private readonly channel: SocketChannel,
    private readonly server: SharedServer,
    private readonly client: McpClient,
    readonly clientPid: number,
    onEnd: (session: DaemonSession) => void,
  ) {
    const ask = (method: string, request: object, ctx: HostRequestContext) => this.ask(method, request, ctx);
    this.handlers = {
      ...askingHandlers(() => this.declared, ask),
      roots: async (ctx) => {
        if (this.declared.roots === undefined) return this.server.params.spec.roots ?? [];
        return ((await ask('roots/list', {}, ctx)) as { roots?: Root[] }).roots ?? [];
      },
    };
    this.engine = new RequestEngine(channel, { name: 'pool client', timeout: 60_000 });
    this.engine.onClose(() => {
      for (const uri of this.uris) void this.server.unsubscribe(uri).catch(() => undefined);
      this.uris.clear();
      this.server.detach(this);
      onEnd(this);
    });
    this.register();
    server.attach(this);
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.initialized) this.engine.notify(method, params).catch(() => undefined);
  }

  subscribed(uri: string): boolean {
    return this.uris.has(uri);
  }

  stderr(line: string): void {
    this.engine.notify(STDERR_NOTE, { line }).catch(() => undefined);
  }

  /** Tells the client why, then closes its connection (its calls in flight fail with `reason`). */
  end(reason: McpError): void {
    this.engine
      .notify(CLOSING_NOTE, { error: toWire(reason) })
      .catch(() => undefined)
      .finally(() => void this.engine.close());
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  private register(): void {
    const engine = this.engine;
    const up = this.client;
    engine.onRequest('initialize', (params) => this.initialize(params));
    engine.onNotification('notifications/initialized', () => void (this.initialized = true));
    this.relay('ping', (o) => up.ping(o).then(() => ({})));
    this.relay('tools/list', async () => ({ tools: await this.server.listTools(up) }));
    this.relay('tools/call', (o, p, ctx) => this.callTool(p, o, ctx));
    this.relay('prompts/list', async (o) => ({ prompts: await up.listPrompts(o) }));
    this.relay('prompts/get', (o, p) => up.getPrompt(String(p.name), (p.arguments ?? {}) as Record<string, string>, o));
    this.relay('resources/list', async (o) => ({ resources: await up.listResources(o) }));
    this.relay('resources/templates/list', async (o) => ({ resourceTemplates: await up.listResourceTemplates(o) }));
    this.relay('resources/read', (o, p) => up.readResource(String(p.uri), o));
    this.relay('completion/complete', async (o, p) => ({
      completion: await up.complete(p.ref as PromptRef | ResourceTemplateRef, p.argument as { name: string; value: string }, p.context as { arguments?: Record<string, string> } | undefined, o),
    }));
    this.relay('logging/setLevel', (o, p) => up.setLogLevel(String(p.level), o).then(() => ({})));
    this.relay('resources/subscribe', async (_o, p) => {
      const uri = String(p.uri);
      if (!this.uris.has(uri)) {
        await this.server.subscribe(uri);
        this.uris.add(uri);
      }
      return {};
    });
    this.relay('resources/unsubscribe', async (_o, p) => {
      const uri = String(p.uri);
      if (this.uris.delete(uri)) await this.server.unsubscribe(uri);
      return {};
    });
  }

  /**
   * Serves `method` by relaying it to the shared server: this session is the caller (its
   * handlers answer the questions about it); the client's cancellation aborts it.
   */
  private relay(method: string, work: (options: RequestOptions, params: Record<string, unknown>, ctx: IncomingRequestContext) => Promise<unknown>): void {
    this.engine.onRequest(method, async (raw, ctx) => {
      const params = (raw ?? {}) as Record<string, unknown>;
      const options: RequestOptions = { signal: ctx.signal, timeout: Infinity, handlers: this.handlers, caller: this };
      try {
        return await work(options, params, ctx);
      } catch (error) {
        throw asRpc(error);
      }
    });
  }

  private async callTool(params: Record<string, unknown>, options: RequestOptions, ctx: IncomingRequestContext): Promise<unknown> {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (p: Progress) => void this.engine.notify('notifications/progress', { progressToken: token, ...p }).catch(() => undefined)
        : undefined;
    this.callsByArgs.set(args, ctx.id);
    try {
      return await this.client.callTool(String(params.name), args, { ...options, ...(onProgress ? { onProgress } : {}) });
    } finally {
      this.callsByArgs.delete(args);
    }
  }

  /** Asks this session's client a question of the server's, marked as about the call that caused it. */
  private ask(method: string, request: object, ctx: HostRequestContext): Promise<unknown> {
    const about = ctx.toolCall ? this.callsByArgs.get(ctx.toolCall.arguments) : this.callsByArgs.size === 1 ? [...this.callsByArgs.values()][0] : undefined;
    const onId = about === undefined ? undefined : (id: number) => this.channel.relate(id, about);
    return this.engine.request({ method, params: request as Record<string, unknown>, phase: 'tools/call', ...(onId ? { onId } : {}) }, { signal: ctx.signal, timeout: ASK_TIMEOUT_MS });
  }

  /** The handshake, from the shared server's own: its identity and capabilities, in the client's revision. */
  private initialize(raw: unknown): Record<string, unknown> {
    const p = (raw ?? {}) as { protocolVersion?: unknown; capabilities?: unknown };
    if (p.capabilities && typeof p.capabilities === 'object') this.declared = p.capabilities as typeof this.declared;
    const protocolVersion = (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(p.protocolVersion) ? (p.protocolVersion as string) : LATEST_PROTOCOL_VERSION;
    const up = this.client;
    return { protocolVersion, capabilities: up.capabilities, serverInfo: up.serverInfo, ...(up.instructions === undefined ? {} : { instructions: up.instructions }) };
  }
}

/** The answer for a failed relay: the server's own JSON-RPC error as it sent it; else ours, with our code in `data`. */
function asRpc(error: unknown): McpError {
  if (error instanceof McpError && error.code === 'rpc-error' && error.rpc) return error;
  const wire = toWire(error);
  return new McpError(wire.code as McpError['code'], wire.message, { rpc: { code: -32603, message: wire.message, data: { 'lazy-mcp/error': wire } } });
}
