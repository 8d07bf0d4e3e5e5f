import { McpError } from '../../errors.js';
import { askingHandlers } from '../../protocol/asking-handlers.js';
import { INTERNAL_ERROR } from '../../protocol/rpc-errors.js';
import { McpServerSession } from '../../protocol/server.js';
import { InputRounds, PendingCall } from '../../protocol/server-rounds.js';
import { CLIENT_CAPABILITIES_META_KEY, MRTR_METHODS, PROTOCOL_VERSION_META_KEY, SUBSCRIPTION_ID_META_KEY } from '../../protocol/eras/modern.js';
import type { RequestOptions } from '../../protocol/client.js';
import type { IncomingRequestContext, RequestEngine } from '../../protocol/engine/engine.js';
import { type HostHandlers, type HostRequestContext, MODERN_PROTOCOL_VERSION, type PromptRef, type ResourceTemplateRef, type Root } from '../../protocol/types.js';
import type { Channel, RequestId } from '../../transport/channel.js';
import { RelayedCalls } from './relayed-calls.js';
import type { AttachedSession, SharedServer } from './shared-server.js';
import { CLOSING_NOTE, STARTED_NOTE, STDERR_NOTE, toWire } from './wire.js';

/**
 * The client's connection: the daemon's Unix socket, or (in a cluster) a member's HTTP
 * session or an in-memory pair; `relate` puts a question on the stream of the call it is about.
 */
export type RelayChannel = Channel & {
  relate?(id: RequestId, to: RequestId): void;
  /** Where the channel lets the session take messages first: the short path of its tool calls (see {@link RelayedCalls}). */
  intercept?: ((message: Record<string, unknown>) => boolean) | undefined;
};

/** A server's question may wait on a person: an hour at most, unless the call ends first. */
const ASK_TIMEOUT_MS = 3_600_000;
/** 2026 era: how long a call that asked its client (`input_required`) waits for the retry. */
const INPUT_TIMEOUT_MS = 600_000;

/** 2026 era: what one `subscriptions/listen` asked for and was granted. */
interface Listen {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  uris: Set<string>;
}

/** The listen filter member each list change is told under. */
const LISTEN_FLAG: Record<string, keyof Omit<Listen, 'uris'>> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};

/**
 * One client's session of one shared server, on the daemon: the MCP server half
 * ({@link McpServerSession}) over the client's socket. The handshake is answered from the running server's own; requests are
 * relayed to the shared client with this session as their caller, so a question the
 * server asks about a call (elicitation, sampling, roots) comes back here, and only here;
 * cancellation and progress follow the relayed request. The client keeps its own
 * time-outs: the daemon adds none.
 *
 * Both eras are spoken, as the gateway speaks them: `initialize` (legacy), or
 * `server/discover` and the 2026 envelope on every request, list changes through
 * `subscriptions/listen`, and a server's questions as `input_required` rounds.
 */
export class DaemonSession implements AttachedSession {
  /** The handshake, the revision checks and the 2026 envelopes, answered as the shared server's own. */
  private readonly session: McpServerSession;
  /** Tool calls in flight, by the arguments object a question's context names: which request it is about. */
  private readonly callsByArgs = new Map<object, RequestId>();
  private readonly uris = new Set<string>();
  private readonly handlers: HostHandlers;
  /** 2026 era: the open `subscriptions/listen` requests. */
  private readonly listens = new Map<RequestId, Listen>();
  private readonly rounds = new InputRounds(INPUT_TIMEOUT_MS);
  private readonly relayed: RelayedCalls;

  constructor(
    private readonly channel: RelayChannel,
    private readonly server: SharedServer,
    readonly clientPid: number,
    onEnd: (session: DaemonSession) => void,
  ) {
    const description = () => server.description();
    this.session = new McpServerSession(channel, {
      name: 'pool client',
      get serverInfo() {
        return description().serverInfo;
      },
      capabilities: () => description().capabilities,
      instructions: () => description().instructions,
      toRpc: asRpc,
    });
    // What the client declared in `initialize`: it is asked only that.
    const declared = () => this.session.clientCapabilities;
    const ask = (method: string, request: object, ctx: HostRequestContext) => this.ask(method, request, ctx);
    this.handlers = {
      ...askingHandlers(declared, ask),
      roots: async (ctx) => {
        if (declared().roots === undefined) return this.server.params.spec.roots ?? [];
        return ((await ask('roots/list', {}, ctx)) as { roots?: Root[] }).roots ?? [];
      },
    };
    const engine = this.engine;
    this.relayed = new RelayedCalls(
      {
        relay: () => server.relay,
        get isOpen() {
          return engine.closedReason === undefined;
        },
        caller: this,
        handlers: this.handlers,
        rounds: this.rounds,
        progress: (params) => void engine.notify('notifications/progress', params).catch(() => undefined),
        enveloped: (result) => this.session.enveloped('tools/call', result),
        roots: () => server.params.spec.roots ?? [],
        asRpc,
      },
      channel,
      this.callsByArgs,
    );
    if ('intercept' in channel) channel.intercept = (message) => this.relayed.take(message);
    this.session.onClose(() => {
      this.relayed.close();
      this.rounds.close();
      for (const listen of this.listens.values()) for (const uri of listen.uris) this.uris.add(uri);
      this.listens.clear();
      for (const uri of this.uris) void this.server.unsubscribe(uri).catch(() => undefined);
      this.uris.clear();
      this.server.detach(this);
      onEnd(this);
    });
    this.register();
    server.attach(this);
  }

  private get engine(): RequestEngine {
    return this.session.engine;
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.session.initialized) this.engine.notify(method, params).catch(() => undefined);
    for (const [id, listen] of this.listens) {
      const flag = LISTEN_FLAG[method];
      const wanted = flag ? listen[flag] === true : method === 'notifications/resources/updated' && listen.uris.has(String(params?.uri));
      if (wanted) this.engine.notify(method, { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: id } }, { relatedTo: id }).catch(() => undefined);
    }
  }

  subscribed(uri: string): boolean {
    if (this.uris.has(uri)) return true;
    for (const listen of this.listens.values()) if (listen.uris.has(uri)) return true;
    return false;
  }

  stderr(line: string): void {
    this.engine.notify(STDERR_NOTE, { line }).catch(() => undefined);
  }

  started(pid: number): void {
    this.engine.notify(STARTED_NOTE, { pid }).catch(() => undefined);
  }

  /** Tells the client why, then closes its connection (its calls in flight fail with `reason`). */
  end(reason: McpError): void {
    this.engine
      .notify(CLOSING_NOTE, { error: toWire(reason) })
      .catch(() => undefined)
      .finally(() => void this.session.close());
  }

  close(): Promise<void> {
    return this.session.close();
  }

  private register(): void {
    // The process is started by the first request that needs it: the handshake and the listings the cache knows need none.
    const up = () => this.server.ready();
    // The server half's own listen grants list changes only; this one subscribes the server to URIs too.
    this.relay('subscriptions/listen', (_o, p, ctx) => this.listen(p, ctx));
    this.relay('ping', async (o) => {
      if (this.server.state === 'ready') await (await up()).ping(o);
      return {};
    });
    this.relay('tools/list', async () => ({ tools: await this.server.listTools() }));
    this.relay('tools/call', (o, p, ctx) => this.callTool(p, o, ctx));
    this.relay('prompts/list', async (o) => ({ prompts: await this.server.listPrompts(o) }));
    this.relay('prompts/get', async (o, p) => (await up()).getPrompt(String(p.name), (p.arguments ?? {}) as Record<string, string>, o));
    this.relay('resources/list', async (o) => ({ resources: await (await up()).listResources(o) }));
    this.relay('resources/templates/list', async (o) => ({ resourceTemplates: await (await up()).listResourceTemplates(o) }));
    this.relay('resources/read', async (o, p) => (await up()).readResource(String(p.uri), o));
    this.relay('completion/complete', async (o, p) => ({
      completion: await (await up()).complete(p.ref as PromptRef | ResourceTemplateRef, p.argument as { name: string; value: string }, p.context as { arguments?: Record<string, string> } | undefined, o),
    }));
    this.relay('logging/setLevel', async (o, p) => (await up()).setLogLevel(String(p.level), o).then(() => ({})));
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
    this.session.handle(method, (params, ctx) =>
      (params._meta as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY] === MODERN_PROTOCOL_VERSION
        ? this.modern(method, params, ctx, work)
        : work({ signal: ctx.signal, timeout: Infinity, handlers: this.handlers, caller: this }, params, ctx),
    );
  }

  /**
   * A 2026 request. One that may make the server ask (a call, a prompt, a read) by a
   * client that declared what may be asked runs as a pending call: the server's questions
   * become `input_required` rounds, and the client's retry (`requestState`) takes it up.
   */
  private modern(method: string, params: Record<string, unknown>, ctx: IncomingRequestContext, work: (options: RequestOptions, params: Record<string, unknown>, ctx: IncomingRequestContext) => Promise<unknown>): Promise<unknown> {
    const meta = params._meta as Record<string, unknown>;
    const declared = (meta[CLIENT_CAPABILITIES_META_KEY] ?? {}) as { elicitation?: unknown; sampling?: unknown };
    const roots = async () => this.server.params.spec.roots ?? [];
    if (!MRTR_METHODS.has(method) || (params.requestState === undefined && declared.elicitation === undefined && declared.sampling === undefined)) {
      return work({ signal: ctx.signal, timeout: Infinity, handlers: { ...askingHandlers(() => ({}), () => Promise.reject()), roots }, caller: {} }, params, ctx);
    }
    const label = `${method} ${JSON.stringify(params.name ?? params.uri ?? '')}`;
    if (params.requestState !== undefined) return this.rounds.round(this.rounds.resume(label, params), ctx.signal, undefined);
    const call = new PendingCall(label, this);
    const handlers = { ...askingHandlers(() => declared, (m, request, c) => call.ask(m, request, c.signal)), roots };
    call.start((signal) => work({ signal, timeout: Infinity, handlers, caller: call }, params, ctx) as Promise<Record<string, unknown>>);
    return this.rounds.round(call, ctx.signal, undefined);
  }

  /**
   * 2026 `subscriptions/listen`: grants the list changes asked for and subscribes the
   * server to the URIs (counted across sessions), acknowledges, and stays open; its
   * notifications travel related to it until the client cancels it (a new listen
   * replaces it: what only this one wanted is unsubscribed then).
   */
  private async listen(params: Record<string, unknown>, ctx: IncomingRequestContext): Promise<Record<string, unknown>> {
    const wanted = (params.notifications ?? {}) as { toolsListChanged?: unknown; promptsListChanged?: unknown; resourcesListChanged?: unknown; resourceSubscriptions?: unknown };
    const listen: Listen = { uris: new Set() };
    for (const flag of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) if (wanted[flag] === true) listen[flag] = true;
    const uris = Array.isArray(wanted.resourceSubscriptions) ? wanted.resourceSubscriptions.filter((u): u is string => typeof u === 'string') : [];
    for (const uri of uris) {
      if (!this.subscribed(uri)) await this.server.subscribe(uri);
      listen.uris.add(uri);
    }
    this.listens.set(ctx.id, listen);
    const meta = { [SUBSCRIPTION_ID_META_KEY]: ctx.id };
    const { uris: granted, ...flags } = listen;
    const notifications = { ...flags, ...(granted.size > 0 ? { resourceSubscriptions: [...granted] } : {}) };
    this.engine.notify('notifications/subscriptions/acknowledged', { notifications, _meta: meta }, { relatedTo: ctx.id }).catch(() => undefined);
    await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true })));
    this.listens.delete(ctx.id);
    for (const uri of listen.uris) if (!this.subscribed(uri)) void this.server.unsubscribe(uri).catch(() => undefined);
    return { _meta: meta };
  }

  private async callTool(params: Record<string, unknown>, options: RequestOptions, ctx: IncomingRequestContext): Promise<unknown> {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    const onProgress = this.session.progressOf(params, ctx);
    this.callsByArgs.set(args, ctx.id);
    try {
      const client = this.server.live ?? (await this.server.ready());
      return await client.callTool(String(params.name), args, { ...options, ...(onProgress ? { onProgress } : {}) });
    } finally {
      this.callsByArgs.delete(args);
    }
  }

  /** Asks this session's client a question of the server's, marked as about the call that caused it. */
  private ask(method: string, request: object, ctx: HostRequestContext): Promise<unknown> {
    const about = ctx.toolCall ? this.callsByArgs.get(ctx.toolCall.arguments) : this.callsByArgs.size === 1 ? [...this.callsByArgs.values()][0] : undefined;
    const onId = about === undefined ? undefined : (id: number) => this.channel.relate?.(id, about);
    // A call on the short path is not the server's client's request: the question stops when the call is over here.
    const over = about === undefined ? undefined : this.relayed.overSignal(about);
    const signal = over ? AbortSignal.any([ctx.signal, over]) : ctx.signal;
    return this.engine.request({ method, params: request as Record<string, unknown>, phase: 'tools/call', ...(onId ? { onId } : {}) }, { signal, timeout: ASK_TIMEOUT_MS });
  }

}

/** The answer for a failed relay: the server's own JSON-RPC error as it sent it; else ours, with our code in `data`. */
function asRpc(error: unknown): McpError {
  if (error instanceof McpError && error.code === 'rpc-error' && error.rpc) return error;
  const wire = toWire(error);
  return new McpError(wire.code as McpError['code'], wire.message, { rpc: { code: INTERNAL_ERROR, message: wire.message, data: { 'lazy-mcp/error': wire } } });
}
