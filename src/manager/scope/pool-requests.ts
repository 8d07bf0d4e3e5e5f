import { McpError, serverLabel } from '../../errors.js';
import type { CallOptions, Completion, GetPromptResult, PromptRef, ResourceTemplateRef } from '../../protocol/types.js';
import { abortable } from '../../util/abortable.js';
import { CallBudget } from '../call/call-budget.js';
import type { Caller } from './host-handlers.js';
import { requestOptions } from '../call/request-options.js';
import type { ManagedPrompt } from '../catalog/prompt-index.js';
import type { ServerDescription } from '../catalog/server-description.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { Subscriptions } from './subscriptions.js';
import type { ToolCatalog } from '../catalog/tool-catalog.js';

type View = ReadonlySet<string> | undefined;

/** What the pool's requests need from the manager. */
export interface PoolContext {
  assertOpen(): void;
  slot(server: string, view?: View): ServerSlot;
  /** Enabled servers of a view that may start now (not cooling down). */
  usable(view: View): ServerSlot[];
  /** Runs `work` for each slot in parallel, leaving out those that fail. */
  each<T>(slots: ServerSlot[], work: (slot: ServerSlot) => Promise<T>): Promise<T[]>;
  readonly catalog: ToolCatalog;
  readonly subscriptions: Subscriptions;
  /** Tells the host something it asked for did not happen as asked (a `log` event). */
  note(server: string, message: string): void;
}

/** Options of `complete`: the request's options and the other arguments already given. */
export interface CompleteOptions extends CallOptions {
  /** Values of the prompt's or template's other arguments, which may narrow the completion. */
  context?: { arguments?: Record<string, string> };
}

/** Log levels of `logging/setLevel` (RFC 5424 severities). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The pool's requests beyond tools — prompts, completion, subscriptions, what a server
 * says about itself, its log level — written once for the manager (the root view) and
 * for sessions (a view and a caller with its own host handlers).
 */
export class PoolRequests {
  constructor(private readonly pool: PoolContext) {}

  async listPrompts(view: View): Promise<ManagedPrompt[]> {
    this.pool.assertOpen();
    const lists = await this.pool.each(this.pool.usable(view), (slot) => this.pool.catalog.promptsOf(slot));
    return lists.flat();
  }

  async getPrompt(view: View, caller: Caller, name: string, args: Record<string, string>, options: CallOptions): Promise<GetPromptResult> {
    this.pool.assertOpen();
    if (typeof name !== 'string') throw new McpError('invalid-arguments', `getPrompt name must be a string, got ${JSON.stringify(name) ?? String(name)}`, {});
    const budget = new CallBudget(options);
    const target = await budget.wait(this.routePrompt(name, view, options.signal), `prompts/get ${JSON.stringify(name)}`, this.pool.catalog.prompts.serverOf(name));
    checkPromptArguments(target, args);
    const slot = this.pool.slot(target.server);
    return slot.run(
      { send: (client, touch, left) => client.getPrompt(target.prompt.name, args, requestOptions(left, caller, touch, slot.stopsWhenIdle)), caller, handlers: caller.handlers },
      budget.rest(),
    );
  }

  async complete(
    view: View,
    server: string,
    ref: PromptRef | ResourceTemplateRef,
    argument: { name: string; value: string },
    options: CompleteOptions,
  ): Promise<Completion> {
    this.pool.assertOpen();
    const slot = this.pool.slot(server, view);
    const { context, ...requestOptions } = options;
    // A host shows prompts under their public names; the server knows its own.
    const known = ref?.type === 'ref/prompt' ? this.pool.catalog.prompts.resolve(ref.name) : undefined;
    const wireRef = known && known.server === server ? { ...ref, name: known.prompt.name } : ref;
    return slot.run((client, _touch, left) => client.complete(wireRef, argument, context, left), requestOptions);
  }

  /** Subscribes to one resource's updates; resolves with the function that ends this subscription. */
  async subscribeResource(view: View, server: string, uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    this.pool.assertOpen();
    this.pool.slot(server, view);
    if (typeof uri !== 'string' || uri === '') throw new McpError('invalid-arguments', `subscribeResource uri must be a non-empty string, got ${JSON.stringify(uri) ?? String(uri)}`, { server });
    if (typeof onUpdated !== 'function') throw new McpError('invalid-arguments', `subscribeResource onUpdated must be a function, got ${typeof onUpdated}`, { server });
    return this.pool.subscriptions.subscribe(server, uri, onUpdated);
  }

  async serverInfo(view: View, server: string): Promise<ServerDescription> {
    this.pool.assertOpen();
    return this.pool.catalog.describe(this.pool.slot(server, view));
  }

  /** `logging/setLevel` on a legacy server (started if it must be); a 2026 server has no such method, so nothing is sent. */
  async setLogLevel(view: View, server: string, level: LogLevel, options: CallOptions = {}): Promise<void> {
    this.pool.assertOpen();
    const slot = this.pool.slot(server, view);
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      throw new McpError('invalid-arguments', `setLogLevel level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level) ?? String(level)}`, { server });
    }
    await slot.run(async (client, _touch, left) => {
      if (client.era === '2026') this.pool.note(server, `setLogLevel(${JSON.stringify(level)}) sent nothing: revision 2026-07-28 has no logging/setLevel (a log level travels per request)`);
      await client.setLogLevel(level, left);
    }, options);
  }

  /** Finds the server and raw prompt behind a public prompt name, starting at most that one server. */
  private async routePrompt(name: string, view: View, signal?: AbortSignal): Promise<ManagedPrompt> {
    const prompts = this.pool.catalog.prompts;
    const known = prompts.resolve(name);
    if (known && (!view || view.has(known.server))) return known;
    const server = prompts.serverOf(name);
    if (server !== undefined && (!view || view.has(server))) {
      const slot = this.pool.slot(server);
      if (!slot.enabled) await slot.ready(); // throws why it cannot run
      if (!prompts.promptsOf(server)) {
        await abortable(this.pool.catalog.promptsOf(slot), signal, `prompts/get ${JSON.stringify(name)}`, server);
        const found = prompts.resolve(name);
        if (found) return found;
      }
    }
    const part = server === undefined ? prompts.unknownServerPart(name) : undefined;
    if (part !== undefined) {
      const configured = prompts.servers().filter((s) => !view || view.has(s));
      const close = prompts.closeServers(part).filter((s) => configured.includes(s));
      throw new McpError(
        'unknown-server',
        `no server named ${JSON.stringify(part)} for prompt ${JSON.stringify(name)}${close.length ? `; did you mean ${close.join(', ')}?` : ''}${configured.length ? ` (configured: ${configured.join(', ')})` : ''}`,
        { phase: 'prompts/get' },
      );
    }
    const matches = prompts.closeMatches(name, 3, view);
    const hint = matches.length > 0 ? `; did you mean ${matches.join(', ')}?` : '';
    throw new McpError('unknown-prompt', `${server === undefined ? '' : serverLabel(server)}no prompt named ${JSON.stringify(name)}${hint}`, {
      ...(server === undefined ? {} : { server }),
      phase: 'prompts/get',
    });
  }
}

/** Prompt arguments are strings, and the ones the prompt requires must be there: checked before anything is sent. */
function checkPromptArguments(target: ManagedPrompt, args: Record<string, string>): void {
  const fail = (why: string) =>
    new McpError('invalid-arguments', `${serverLabel(target.server)}invalid arguments for prompt ${JSON.stringify(target.name)}: ${why}`, {
      server: target.server,
      phase: 'prompts/get',
    });
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw fail(`the arguments must be an object of strings, got ${JSON.stringify(args) ?? String(args)}`);
  const wrong = Object.entries(args).find(([, value]) => typeof value !== 'string');
  if (wrong) throw fail(`\`${wrong[0]}\` must be a string, got ${JSON.stringify(wrong[1]) ?? String(wrong[1])} (${typeof wrong[1]})`);
  const missing = (target.prompt.arguments ?? []).filter((a) => a.required === true && !Object.hasOwn(args, a.name)).map((a) => `\`${a.name}\` is required`);
  if (missing.length > 0) throw fail(missing.join('; '));
}
