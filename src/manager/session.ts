import { setMaxListeners } from 'node:events';
import { McpError } from '../errors.js';
import type { CallOptions, CallToolResult, ReadResourceResult } from '../protocol/types.js';
import type { ManagedResource, ManagedResourceTemplate } from './manager.js';
import { abortable } from './abortable.js';
import type { ToolMatch } from '../model/tool-search.js';
import type { ToolPredicate } from './tool-filter.js';
import type { ManagedTool } from './tool-index.js';

type View = ReadonlySet<string> | undefined;

/** What a session needs from its manager: the manager's work, limited to a view. */
export interface SessionCore {
  assertOpen(): void;
  listTools(view: View, filter?: ToolPredicate): Promise<ManagedTool[]>;
  searchTools(view: View, query: string, limit: number | undefined, filter?: ToolPredicate): Promise<ToolMatch[]>;
  callTool(view: View, name: string, args: Record<string, unknown>, options: CallOptions, filter?: ToolPredicate): Promise<CallToolResult>;
  callServerTool(view: View, server: string, tool: string, args: Record<string, unknown>, options: CallOptions, filter?: ToolPredicate): Promise<CallToolResult>;
  listResources(view: View, server: string | undefined): Promise<ManagedResource[]>;
  listResourceTemplates(view: View, server: string | undefined): Promise<ManagedResourceTemplate[]>;
  readResource(view: View, server: string, uri: string, options: CallOptions): Promise<ReadResourceResult>;
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
  private closed = false;

  /** @internal Made by `McpServerManager.session()`. */
  constructor(
    private readonly core: SessionCore,
    private readonly view: View,
    private readonly onClose: () => void,
    /** The session's own tool filter over raw names, on top of each server's. */
    private readonly filter?: ToolPredicate,
  ) {
    setMaxListeners(0, this.shared.signal);
  }

  /** The servers this session may use; undefined means all of the manager's. */
  get servers(): string[] | undefined {
    return this.view && [...this.view];
  }

  listTools(): Promise<ManagedTool[]> {
    return this.track({}, (o) => abortable(this.core.listTools(this.view, this.filter), o.signal, 'listing tools'));
  }

  /** Like the manager's `searchTools`, over this session's servers and tools; starts nothing. */
  searchTools(query: string, options: { limit?: number; servers?: string[] } = {}): Promise<ToolMatch[]> {
    return this.track({}, async (o) => {
      const outside = options.servers?.find((s) => this.view && !this.view.has(s));
      if (outside !== undefined) throw new McpError('unknown-server', `no server named ${JSON.stringify(outside)} in this session`, { server: outside });
      const view = options.servers ? new Set(options.servers) : this.view;
      return abortable(this.core.searchTools(view, query, options.limit, this.filter), o.signal, 'searching tools');
    });
  }

  callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    return this.track(options, (o) => this.core.callTool(this.view, name, args, o, this.filter));
  }

  callServerTool(server: string, tool: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    return this.track(options, (o) => this.core.callServerTool(this.view, server, tool, args, o, this.filter));
  }

  /** Resources of one server of this session, or of all of them. */
  listResources(server?: string): Promise<ManagedResource[]> {
    return this.track({}, (o) => abortable(this.core.listResources(this.view, server), o.signal, 'listing resources'));
  }

  listResourceTemplates(server?: string): Promise<ManagedResourceTemplate[]> {
    return this.track({}, (o) => abortable(this.core.listResourceTemplates(this.view, server), o.signal, 'listing resource templates'));
  }

  readResource(server: string, uri: string, options: CallOptions = {}): Promise<ReadResourceResult> {
    return this.track(options, (o) => this.core.readResource(this.view, server, uri, o));
  }

  /** Cancels this session's calls in flight (they reject with `closed`); later calls reject with `closed`. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.shared.abort(this.closedError());
    for (const controller of this.inFlight) controller.abort(this.closedError());
    this.inFlight.clear();
    this.onClose();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Runs a request under this session's own abort, so close() reaches exactly its calls. */
  private async track<T>(options: CallOptions, work: (options: CallOptions) => Promise<T>): Promise<T> {
    if (this.closed) throw this.closedError();
    this.core.assertOpen();
    const callerSignal = options.signal;
    if (!callerSignal) {
      try {
        return await work({ ...options, signal: this.shared.signal });
      } catch (error) {
        throw this.asClosed(error, this.shared.signal, undefined);
      }
    }
    const controller = new AbortController();
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else this.follow(callerSignal, controller);
    this.inFlight.add(controller);
    try {
      return await work({ ...options, signal: controller.signal });
    } catch (error) {
      throw this.asClosed(error, controller.signal, callerSignal);
    } finally {
      this.inFlight.delete(controller);
      this.unfollow(callerSignal, controller);
    }
  }

  /** A call cancelled because the session closed (not by its caller) rejects with `closed`. */
  private asClosed(error: unknown, signal: AbortSignal, callerSignal: AbortSignal | undefined): unknown {
    const closedBySession = signal.reason instanceof McpError && signal.reason.code === 'closed' && !callerSignal?.aborted;
    if (!closedBySession || !(error instanceof McpError) || error.code !== 'cancelled') return error;
    return new McpError('closed', `${error.message.replace(/ was cancelled$/, '')} was cancelled: the session was closed`, {
      server: error.server,
      phase: error.phase,
      cause: error,
    });
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
