import { McpError, serverLabel } from '../../errors.js';
import { shown } from '../../util/check.js';
import { METHOD_NOT_FOUND } from '../../protocol/rpc-errors.js';
import type { SearchToolsOptions, ToolSearchResult } from '../../model/tool-search.js';
import { loadValidator, validatorLoaded } from '../../protocol/schemas/schema-validator.js';
import type {
  CallOptions,
  CallToolResult,
  Completion,
  GetPromptResult,
  PromptRef,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceTemplateRef,
  Tool,
} from '../../protocol/types.js';
import { abortable } from '../../util/deadline.js';
import { CallBudget } from '../call/call-budget.js';
import { requestOptions } from '../call/request-options.js';
import { checkArguments } from '../call/tool-contract.js';
import { ToolCall } from '../call/tool-call.js';
import type { ManagedPrompt } from '../catalog/prompt-index.js';
import type { ServerDescription } from '../catalog/server-description.js';
import type { ToolPredicate } from '../catalog/tool-filter.js';
import type { ManagedTool } from '../catalog/tool-index.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { Caller } from './host-handlers.js';
import { assertOpen, closedError, eachSlot, enabledSlots, narrow, type PoolState, slotOf, usableSlots, type View } from './pool-state.js';
import { routePrompt, routeTool } from './router.js';

export interface ManagedResource {
  server: string;
  resource: Resource;
}

export interface ManagedResourceTemplate {
  server: string;
  resourceTemplate: ResourceTemplate;
}

/** Options of `complete`: the request's options and the other arguments already given. */
export interface CompleteOptions extends CallOptions {
  /** Values of the prompt's or template's other arguments, which may narrow the completion. */
  context?: { arguments?: Record<string, string> };
}

/** Log levels of `logging/setLevel` (RFC 5424 severities). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Which servers a listing covers: by default all of the scope's. */
export interface ServersOption {
  servers?: string[];
}

/** The options of a call that gives none: one object, never written to, rather than one per call. */
export const NO_OPTIONS: CallOptions = Object.freeze({});

// Span labels: made once, or per call only when tracing is on.
const LIST_RESOURCES = { method: 'resources/list' };
const LIST_TEMPLATES = { method: 'resources/templates/list' };

/**
 * What a caller may see and do in the pool: every pool method, written once. The manager's
 * methods are its root scope (all servers, the manager's handlers); a session is a scope
 * limited to some servers and tools, whose servers' questions go to its own handlers.
 */
export class Scope {
  /** @internal Made by the manager: its root scope and its sessions. */
  constructor(
    private readonly pool: PoolState,
    /** The servers this scope may use; undefined means all of the pool's. */
    protected readonly view: View,
    /** The scope's own tool filter over raw names, on top of each server's. */
    private readonly filter: ToolPredicate | undefined,
    /** Whose handlers answer the servers' questions about this scope's requests. */
    private readonly caller: Caller,
  ) {}

  /** Every tool of the scope's servers (or of `servers`), starting in parallel only those whose tools are unknown. */
  listTools(options: ServersOption = {}): Promise<ManagedTool[]> {
    return this.track(NO_OPTIONS, async (o) => {
      const view = narrow(this.pool, this.view, options.servers);
      // A server failing to start is left out even if its tools were known before.
      const lists = abortable(eachSlot(this.pool, usableSlots(this.pool, view), (slot) => this.pool.catalog.toolsOf(slot)), o.signal, 'listing tools');
      const filter = this.filter;
      return filter ? (await lists).flat().filter((t) => filter(t.tool.name)) : (await lists).flat();
    });
  }

  /**
   * The tools best matching a query, best first (default `limit` 8): BM25 over names, titles,
   * descriptions and parameters, with everyday words led to tool words ("remember" to
   * memory, "add 2 and 40" to a sum), an exact or near-exact name first. With `embed`, the
   * host's embedding model ranks too (see {@link SearchToolsOptions.embed}). Answers from the
   * tools known and the manifest cache; starts nothing: `nothingIndexed` and `unindexed`
   * say which servers it could not see (warm up with `listTools()` once, or a `cacheDir`).
   */
  searchTools(query: string, options: SearchToolsOptions = {}): Promise<ToolSearchResult> {
    return this.track(NO_OPTIONS, (o) => abortable(this.search(query, options), o.signal, 'searching tools'));
  }

  /** Calls a tool by its public name; only the server that owns it is started. */
  // Not async: the way to a known tool takes no routing wait, and each async layer costs every call more microtask turns.
  callTool(name: string, args: Record<string, unknown> = {}, options?: CallOptions): Promise<CallToolResult> {
    const plain = this.plainOptions(options);
    return plain ? this.call(name, args, plain) : this.track(options, (o) => this.call(name, args, o));
  }

  /** Calls a tool by its server and its own name. */
  callServerTool(server: string, tool: string, args: Record<string, unknown> = {}, options: CallOptions = NO_OPTIONS): Promise<CallToolResult> {
    return this.track(options, async (o) => this.invoke(slotOf(this.pool, server, this.view), tool, args, o));
  }

  /** Resources of one server, or of every server of the scope (started in parallel; failures left out). */
  listResources(server?: string): Promise<ManagedResource[]> {
    return this.track(NO_OPTIONS, (o) =>
      abortable(
        this.fromServers(server, async (slot) => {
          const resources = await slot.run((client) => (client.capabilities.resources ? client.listResources() : Promise.resolve([])), {}, LIST_RESOURCES);
          return resources.map((resource) => ({ server: slot.name, resource }));
        }),
        o.signal,
        'listing resources',
      ),
    );
  }

  /** Resource templates of one server, or of every server of the scope. */
  listResourceTemplates(server?: string): Promise<ManagedResourceTemplate[]> {
    return this.track(NO_OPTIONS, (o) =>
      abortable(
        this.fromServers(server, async (slot) => {
          const templates = await slot.run(
            (client) => (client.capabilities.resources ? client.listResourceTemplates().catch(noTemplates) : Promise.resolve([])),
            {},
            LIST_TEMPLATES,
          );
          return templates.map((resourceTemplate) => ({ server: slot.name, resourceTemplate }));
        }),
        o.signal,
        'listing resource templates',
      ),
    );
  }

  readResource(server: string, uri: string, options: CallOptions = NO_OPTIONS): Promise<ReadResourceResult> {
    return this.track(options, async (o) => {
      const slot = slotOf(this.pool, server, this.view);
      const caller = this.caller;
      return slot.run(
        { send: (client, touch, left) => client.readResource(uri, requestOptions(left, caller, touch, slot.stopsWhenIdle)), caller, handlers: caller.handlers },
        o,
        this.pool.tracing && { method: 'resources/read', resourceUri: uri },
      );
    });
  }

  /** Every prompt of the scope's servers under its public name, starting in parallel only those whose prompts are unknown. */
  listPrompts(options: ServersOption = {}): Promise<ManagedPrompt[]> {
    return this.track(NO_OPTIONS, async (o) => {
      const view = narrow(this.pool, this.view, options.servers);
      const lists = await abortable(eachSlot(this.pool, usableSlots(this.pool, view), (slot) => this.pool.catalog.promptsOf(slot)), o.signal, 'listing prompts');
      return lists.flat();
    });
  }

  /** Gets a prompt by its public name; only the server that owns it is started. A question the server asks meanwhile goes to this scope's handlers. */
  getPrompt(name: string, args: Record<string, string> = {}, options: CallOptions = NO_OPTIONS): Promise<GetPromptResult> {
    return this.track(options, async (o) => {
      if (typeof name !== 'string') throw new McpError('invalid-arguments', `getPrompt name must be a string, got ${shown(name)}`, {});
      const budget = new CallBudget(o);
      const target = await budget.wait(routePrompt(this.pool, name, this.view, o.signal), `prompts/get ${JSON.stringify(name)}`, this.pool.catalog.prompts.serverOf(name));
      checkPromptArguments(target, args);
      const slot = slotOf(this.pool, target.server);
      const caller = this.caller;
      return slot.run(
        { send: (client, touch, left) => client.getPrompt(target.prompt.name, args, requestOptions(left, caller, touch, slot.stopsWhenIdle)), caller, handlers: caller.handlers },
        budget.rest(),
      );
    });
  }

  /** Completion of a prompt's or resource template's argument (`ref/prompt` takes the public or the server's own prompt name). */
  complete(server: string, ref: PromptRef | ResourceTemplateRef, argument: { name: string; value: string }, options: CompleteOptions = NO_OPTIONS): Promise<Completion> {
    return this.track(options, async (o) => {
      const slot = slotOf(this.pool, server, this.view);
      const { context, ...rest } = options;
      // A host shows prompts under their public names; the server knows its own.
      const known = ref?.type === 'ref/prompt' ? this.pool.catalog.prompts.resolve(ref.name) : undefined;
      const wireRef = known && known.server === server ? { ...ref, name: known.prompt.name } : ref;
      return slot.run((client, _touch, left) => client.complete(wireRef, argument, context, left), { ...rest, signal: o.signal });
    });
  }

  /**
   * Calls `onUpdated` whenever the resource changes; resolves once the server accepted,
   * with the function that ends this subscription. The server is asked once per uri
   * however many subscribe, and told to stop when the last one leaves.
   */
  subscribeResource(server: string, uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    return this.track(NO_OPTIONS, async () => {
      slotOf(this.pool, server, this.view);
      if (typeof uri !== 'string' || uri === '') throw new McpError('invalid-arguments', `subscribeResource uri must be a non-empty string, got ${shown(uri)}`, { server });
      if (typeof onUpdated !== 'function') throw new McpError('invalid-arguments', `subscribeResource onUpdated must be a function, got ${typeof onUpdated}`, { server });
      return this.pool.subscriptions.subscribe(server, uri, onUpdated);
    });
  }

  /** What the server says about itself; from the last start or the cache when known (nothing spawned), else it is started. */
  serverInfo(server: string): Promise<ServerDescription> {
    return this.track(NO_OPTIONS, (o) => abortable(this.pool.catalog.describe(slotOf(this.pool, server, this.view)), o.signal, 'describing the server'));
  }

  /** Sets a legacy server's log level (`logging/setLevel`); a no-op for 2026 servers, whose log level travels per request. */
  setLogLevel(server: string, level: LogLevel, options: CallOptions = NO_OPTIONS): Promise<void> {
    return this.track(options, async (o) => {
      const slot = slotOf(this.pool, server, this.view);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new McpError('invalid-arguments', `setLogLevel level must be one of ${LOG_LEVELS.join(', ')}, got ${shown(level)}`, { server });
      }
      await slot.run(async (client, _touch, left) => {
        if (client.era === '2026') this.pool.note(server, `setLogLevel(${JSON.stringify(level)}) sent nothing: revision 2026-07-28 has no logging/setLevel (a log level travels per request)`);
        await client.setLogLevel(level, left);
      }, o);
    });
  }

  /**
   * Runs a request under the scope's lifetime: the root's is the manager's. A session
   * overrides it so that its close() reaches exactly its own requests.
   */
  protected async track<T>(options: CallOptions | undefined, work: (options: CallOptions) => Promise<T>): Promise<T> {
    assertOpen(this.pool);
    return work(options ?? NO_OPTIONS);
  }

  /** The options a call goes with when it needs no tracking of its own (the usual call), else undefined. */
  protected plainOptions(options: CallOptions | undefined): CallOptions | undefined {
    return options ?? NO_OPTIONS;
  }

  // Not async on the way to a known tool: each async layer costs a call more turns of the microtask queue.
  private call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    if (this.pool.closed) return Promise.reject(closedError());
    // A known tool needs no routing wait, so no budget: the request gets the call's own options.
    const known = this.pool.catalog.index.resolve(name);
    const view = this.view;
    if (known && (!view || view.has(known.server))) return this.invoke(slotOf(this.pool, known.server), known.tool.name, args, options, name, known.tool);
    return this.callRouted(name, args, options);
  }

  private async callRouted(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    // The call's time-outs cover the start that routing may wait for, too.
    const budget = new CallBudget(options);
    const target = await budget.wait(routeTool(this.pool, name, this.view, options.signal), `tools/call ${JSON.stringify(name)}`, this.pool.catalog.index.serverOf(name));
    return await this.invoke(slotOf(this.pool, target.server), target.tool.name, args, budget.rest(), name);
  }

  /**
   * One tool call on `slot`. `known`: the tool's definition when the caller found it by its
   * public name (so the server's config lets it through). Not async: an async frame would
   * cost every call a promise and more microtask turns.
   */
  private invoke(slot: ServerSlot, tool: string, args: Record<string, unknown>, options: CallOptions, publicName?: string, known?: Tool): Promise<CallToolResult> {
    const name = publicName ?? tool;
    const maxResultBytes = options.maxResultBytes ?? this.pool.maxResultBytes;
    const index = this.pool.catalog.index;
    try {
      if (maxResultBytes !== undefined && !(Number.isSafeInteger(maxResultBytes) && maxResultBytes > 0)) {
        throw new McpError('invalid-arguments', `maxResultBytes must be a positive whole number of bytes, got ${shown(maxResultBytes)}`, {
          server: slot.name,
          phase: 'tools/call',
        });
      }
      if (!known && !index.allowed(slot.name, tool)) {
        // A filtered tool does not exist for the caller: the server is never asked.
        throw new McpError('unknown-tool', `${serverLabel(slot.name)}no tool named ${JSON.stringify(name)}`, { server: slot.name, phase: 'tools/call' });
      }
      if (this.filter && !this.filter(tool)) {
        // It exists, but not for this session: saying so spares a hunt for a typo.
        throw new McpError('unknown-tool', `${serverLabel(slot.name)}tool ${JSON.stringify(name)} is not available in this session (its tools filter leaves it out)`, {
          server: slot.name,
          phase: 'tools/call',
        });
      }
      // Arguments that do not fit are refused before anything starts, when the tool is known.
      known ??= index.definition(slot.name, tool)?.tool;
      if (known && !validatorLoaded()) {
        // The process's first check loads the validator, then the call goes as every later one.
        return loadValidator().then(() => this.invoke(slot, tool, args, options, publicName, known));
      }
      if (known) checkArguments(slot.name, known, args, publicName);
    } catch (error) {
      return Promise.reject(error);
    }
    const call = new ToolCall(this.pool.toolCalls, slot, tool, args, name, known, this.caller, maxResultBytes);
    return slot.run(call, options, this.pool.tracing && { method: 'tools/call', target: tool });
  }

  private async search(query: string, options: SearchToolsOptions): Promise<ToolSearchResult> {
    const { limit, embed } = options;
    if (typeof query !== 'string') throw new McpError('invalid-arguments', `searchTools query must be a string, got ${shown(query)}`, {});
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
      throw new McpError('invalid-arguments', `searchTools limit must be a positive whole number, got ${shown(limit)}`, {});
    }
    if (embed !== undefined && typeof embed !== 'function') throw new McpError('invalid-arguments', `searchTools embed must be a function, got ${typeof embed}`, {});
    const { catalog, search } = this.pool;
    const view = narrow(this.pool, this.view, options.servers);
    const slots = enabledSlots(this.pool, view);
    await Promise.all(slots.map((slot) => catalog.peek(slot)));
    // Re-indexes only the servers whose list changed since the last search.
    for (const slot of this.pool.slots.values()) search.update(slot.name, slot.enabled ? catalog.index.toolsOf(slot.name) : undefined);
    const filter = this.filter;
    const within = { limit, servers: view, accept: filter && ((t: ManagedTool) => filter(t.tool.name)) };
    const matches = embed ? await search.searchHybrid(query, embed, within) : search.search(query, within);
    const unindexed = slots.filter((slot) => !catalog.index.toolsOf(slot.name)).map((slot) => slot.name);
    // Not enumerable: the answer still reads, compares and serialises as the array of matches.
    return Object.defineProperties(matches, { nothingIndexed: { value: unindexed.length === slots.length }, unindexed: { value: unindexed } }) as ToolSearchResult;
  }

  /**
   * One named server's list (its error, such as `invalid-config`, is thrown), or every
   * enabled server's in parallel, leaving out those that fail.
   */
  private async fromServers<T>(server: string | undefined, list: (slot: ServerSlot) => Promise<T[]>): Promise<T[]> {
    if (server !== undefined) return list(slotOf(this.pool, server, this.view));
    return (await eachSlot(this.pool, enabledSlots(this.pool, this.view), list)).flat();
  }
}

/** A server with resources but without templates may answer -32601 (method not found): that is no templates, not a failure. */
function noTemplates(error: unknown): ResourceTemplate[] {
  if (error instanceof McpError && error.code === 'rpc-error' && error.rpc?.code === METHOD_NOT_FOUND) return [];
  throw error;
}

/** Prompt arguments are strings, and the ones the prompt requires must be there: checked before anything is sent. */
function checkPromptArguments(target: ManagedPrompt, args: Record<string, string>): void {
  const fail = (why: string) =>
    new McpError('invalid-arguments', `${serverLabel(target.server)}invalid arguments for prompt ${JSON.stringify(target.name)}: ${why}`, {
      server: target.server,
      phase: 'prompts/get',
    });
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw fail(`the arguments must be an object of strings, got ${shown(args)}`);
  const wrong = Object.entries(args).find(([, value]) => typeof value !== 'string');
  if (wrong) throw fail(`\`${wrong[0]}\` must be a string, got ${shown(wrong[1])}`);
  const missing = (target.prompt.arguments ?? []).filter((a) => a.required === true && !Object.hasOwn(args, a.name)).map((a) => `\`${a.name}\` is required`);
  if (missing.length > 0) throw fail(missing.join('; '));
}
