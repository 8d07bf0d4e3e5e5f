import { setMaxListeners } from 'node:events';
import { McpError } from '../errors.js';
import { copyWith } from '../protocol/copy-with.js';
import { keepListening } from '../protocol/pending-requests.js';
import type { CallOptions, CallToolResult, Completion, GetPromptResult, PromptRef, ReadResourceResult, ResourceTemplateRef } from '../protocol/types.js';
import type { Caller } from './host-handlers.js';
import type { CompleteOptions, LogLevel, PoolRequests } from './pool-requests.js';
import type { ManagedPrompt } from './prompt-index.js';
import type { ServerDescription } from './server-description.js';
import type { ManagedResource, ManagedResourceTemplate } from './manager.js';
import { abortable } from './abortable.js';
import type { ToolSearchResult } from '../model/tool-search.js';
import type { ToolPredicate } from './tool-filter.js';
import type { ManagedTool } from './tool-index.js';
import { nextSessionId } from '../share/principals/principal-scope.js';

type View = ReadonlySet<string> | undefined;

/** What a session needs from its manager: the manager's work, limited to a view. */
export interface SessionCore {
  assertOpen(): void;
  listTools(view: View, filter?: ToolPredicate): Promise<ManagedTool[]>;
  searchTools(view: View, query: string, limit: number | undefined, filter?: ToolPredicate): Promise<ToolSearchResult>;
  callTool(view: View, name: string, args: Record<string, unknown>, options: CallOptions, filter?: ToolPredicate, caller?: Caller): Promise<CallToolResult>;
  callServerTool(
    view: View,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions,
    filter?: ToolPredicate,
    caller?: Caller,
  ): Promise<CallToolResult>;
  listResources(view: View, server: string | undefined): Promise<ManagedResource[]>;
  listResourceTemplates(view: View, server: string | undefined): Promise<ManagedResourceTemplate[]>;
  readResource(view: View, server: string, uri: string, options: CallOptions, caller?: Caller): Promise<ReadResourceResult>;
  readonly requests: PoolRequests;
}

/**
 * One chat session's view of the shared pool: the same processes, limited to some
 * servers. `close()` cancels this session's calls in flight and nobody else's.
 */
export class ToolSession {
  /**
   * Aborted by close(): the signal of every call made without a caller signal. One per
   * session, not one per call: an AbortController per call cost a session a third of the
   * manager's throughput (its construction and garbage). Each request's listener is removed
   * when it settles, so any number of calls in flight may listen.
   */
  private readonly shared = new AbortController();
  /** Calls that brought their own signal: each has a controller following that signal and close(). */
  private readonly inFlight = new Set<AbortController>();
  /** Per caller signal, the calls it cancels and its one listener. */
  private readonly followers = new Map<AbortSignal, { set: Set<AbortController>; onAbort: () => void }>();
  /** The options of a call that brings none. */
  private plain: CallOptions | undefined;
  /** This session's resource subscriptions, ended when it closes. */
  private readonly unsubscribes = new Set<() => Promise<void>>();
  private closed = false;

  /** @internal Made by `McpServerManager.session()`. */
  constructor(
    private readonly core: SessionCore,
    private readonly view: View,
    private readonly onClose: () => void,
    /** The session's own tool filter over raw names, on top of each server's. */
    private readonly filter?: ToolPredicate,
    /** Whose handlers answer the servers' questions about this session's calls. */
    private readonly caller?: Caller,
    /** How `unrouted` events name this session. */
    readonly id: string = nextSessionId(),
  ) {
    setMaxListeners(0, this.shared.signal);
    keepListening(this.shared.signal);
  }

  /** The servers this session may use; undefined means all of the manager's. */
  get servers(): string[] | undefined {
    return this.view && [...this.view];
  }

  listTools(): Promise<ManagedTool[]> {
    return this.track({}, (o) => abortable(this.core.listTools(this.view, this.filter), o.signal, 'listing tools'));
  }

  /** Like the manager's `searchTools`, over this session's servers and tools; starts nothing. */
  searchTools(query: string, options: { limit?: number; servers?: string[] } = {}): Promise<ToolSearchResult> {
    return this.track({}, async (o) => {
      const outside = options.servers?.find((s) => this.view && !this.view.has(s));
      if (outside !== undefined) throw new McpError('unknown-server', `no server named ${JSON.stringify(outside)} in this session`, { server: outside });
      const view = options.servers ? new Set(options.servers) : this.view;
      return abortable(this.core.searchTools(view, query, options.limit, this.filter), o.signal, 'searching tools');
    });
  }

  callTool(name: string, args: Record<string, unknown> = {}, options?: CallOptions): Promise<CallToolResult> {
    // The usual call, without a signal of its own: no closure, no async frame, no copy when it has no options either.
    if (options?.signal === undefined && !this.closed) return this.core.callTool(this.view, name, args, this.withSessionSignal(options), this.filter, this.caller);
    return this.track(options, (o) => this.core.callTool(this.view, name, args, o, this.filter, this.caller));
  }

  callServerTool(server: string, tool: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    return this.track(options, (o) => this.core.callServerTool(this.view, server, tool, args, o, this.filter, this.caller));
  }

  /** Resources of one server of this session, or of all of them. */
  listResources(server?: string): Promise<ManagedResource[]> {
    return this.track({}, (o) => abortable(this.core.listResources(this.view, server), o.signal, 'listing resources'));
  }

  listResourceTemplates(server?: string): Promise<ManagedResourceTemplate[]> {
    return this.track({}, (o) => abortable(this.core.listResourceTemplates(this.view, server), o.signal, 'listing resource templates'));
  }

  readResource(server: string, uri: string, options: CallOptions = {}): Promise<ReadResourceResult> {
    return this.track(options, (o) => this.core.readResource(this.view, server, uri, o, this.caller));
  }

  /** The prompts of this session's servers, under their public names. */
  listPrompts(): Promise<ManagedPrompt[]> {
    return this.track({}, (o) => abortable(this.core.requests.listPrompts(this.view), o.signal, 'listing prompts'));
  }

  /** Gets a prompt by its public name; a question the server asks meanwhile goes to this session's handlers. */
  getPrompt(name: string, args: Record<string, string> = {}, options: CallOptions = {}): Promise<GetPromptResult> {
    return this.track(options, (o) => this.core.requests.getPrompt(this.view, this.caller ?? { handlers: {} }, name, args, o));
  }

  complete(server: string, ref: PromptRef | ResourceTemplateRef, argument: { name: string; value: string }, options: CompleteOptions = {}): Promise<Completion> {
    return this.track(options, (o) => this.core.requests.complete(this.view, server, ref, argument, { ...options, signal: o.signal }));
  }

  /** Like the manager's; the subscription also ends when the session closes. */
  async subscribeResource(server: string, uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    const unsubscribe = await this.track({}, () => this.core.requests.subscribeResource(this.view, server, uri, onUpdated));
    if (this.closed) {
      await unsubscribe();
      throw this.closedError();
    }
    const mine = () => (this.unsubscribes.delete(mine), unsubscribe());
    this.unsubscribes.add(mine);
    return mine;
  }

  serverInfo(server: string): Promise<ServerDescription> {
    return this.track({}, (o) => abortable(this.core.requests.serverInfo(this.view, server), o.signal, 'describing the server'));
  }

  setLogLevel(server: string, level: LogLevel, options: CallOptions = {}): Promise<void> {
    return this.track(options, (o) => this.core.requests.setLogLevel(this.view, server, level, o));
  }

  /** Cancels this session's calls in flight (they reject with `closed`); later calls reject with `closed`. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.shared.abort(this.closedError());
    for (const controller of this.inFlight) controller.abort(this.closedError());
    this.inFlight.clear();
    for (const unsubscribe of [...this.unsubscribes]) void unsubscribe();
    this.onClose();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Runs a request under this session's own abort, so close() reaches exactly its calls:
   * aborted by close(), they reject with `closed` (see `stoppedBy`).
   */
  private async track<T>(options: CallOptions | undefined, work: (options: CallOptions) => Promise<T>): Promise<T> {
    if (this.closed) throw this.closedError();
    this.core.assertOpen();
    const callerSignal = options?.signal;
    if (!callerSignal) return work(this.withSessionSignal(options));
    const controller = new AbortController();
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else this.follow(callerSignal, controller);
    this.inFlight.add(controller);
    try {
      return await work(copyWith(options, 'signal', controller.signal));
    } finally {
      this.inFlight.delete(controller);
      this.unfollow(callerSignal, controller);
    }
  }

  /** A call's options with this session's signal, for a call that brings none: one object for every call that brings no options. */
  private withSessionSignal(options: CallOptions | undefined): CallOptions {
    return options === undefined ? (this.plain ??= { signal: this.shared.signal }) : copyWith(options, 'signal', this.shared.signal);
  }

  /**
   * Chains a caller's signal to a call's controller with one listener per signal however
   * many calls share it (AbortSignal.any leaks on Node 20 and a listener per call trips
   * MaxListenersExceededWarning).
   */
  private follow(signal: AbortSignal, controller: AbortController): void {
    let followers = this.followers.get(signal);
    if (!followers) {
      const set = new Set<AbortController>();
      followers = { set, onAbort: () => set.forEach((c) => c.abort(signal.reason)) };
      this.followers.set(signal, followers);
      signal.addEventListener('abort', followers.onAbort, { once: true });
    }
    followers.set.add(controller);
  }

  private unfollow(signal: AbortSignal, controller: AbortController): void {
    const followers = this.followers.get(signal);
    if (!followers) return;
    followers.set.delete(controller);
    if (followers.set.size > 0) return;
    signal.removeEventListener('abort', followers.onAbort);
    this.followers.delete(signal);
  }

  private closedError(): McpError {
    return new McpError('closed', 'the session was closed', {});
  }
}
