import { McpError, serverLabel } from '../../errors.js';
import { METHOD_NOT_FOUND } from '../../transport/mcp-constants.js';
import { DISCOVER_PROBE_MS } from '../client-options.js';
import type { RequestEngine } from '../engine/engine.js';
import type { HostRequests } from '../host-requests.js';
import type { ServerCapabilities } from '../types.js';
import { type ListenFilter, SUBSCRIPTION_ID_META_KEY, withEnvelope } from './modern.js';

/** How a `subscriptions/listen` went: `granted` once acknowledged; `error` if refused; neither if it was not acknowledged in time. */
interface ListenOutcome {
  granted?: ListenFilter;
  error?: McpError;
}

/**
 * A 2026 session's `subscriptions/listen`: the one open listen carrying what the session
 * wants (the list changes the server declares, the subscribed resource URIs), replaced
 * whenever that changes, and its acknowledgements.
 */
export class Listen {
  /** The open `subscriptions/listen` request, if any. */
  private listening: { id: number } | undefined;
  /** Listens are replaced one at a time (a subscription change opens a new one, then cancels the old). */
  private relisten: Promise<unknown> = Promise.resolve();
  /** The resource URIs subscribed to, carried by every listen. */
  private readonly subscribedUris = new Set<string>();
  /** A listen's acknowledgement, by the listen's request id. */
  private readonly acks = new Map<number, (granted: ListenFilter) => void>();

  constructor(
    private readonly engine: RequestEngine,
    private readonly host: HostRequests,
    private readonly name: string | undefined,
    private readonly capabilities: () => ServerCapabilities,
  ) {
    engine.onNotification('notifications/subscriptions/acknowledged', (params) => {
      const p = params as { notifications?: ListenFilter; _meta?: Record<string, unknown> } | undefined;
      const id = Number(p?._meta?.[SUBSCRIPTION_ID_META_KEY]);
      this.acks.get(id)?.(p?.notifications ?? {});
      this.acks.delete(id);
    });
  }

  /** Subscribes to a resource's updates: a new listen naming the URI, resolved once the server acknowledges it. */
  async subscribe(uri: string, timeout: number | undefined): Promise<void> {
    if (!this.capabilities().resources?.subscribe) throw this.noSubscriptions(uri, 'the server does not declare resources.subscribe');
    if (this.subscribedUris.has(uri)) return;
    this.subscribedUris.add(uri);
    const outcome = await this.update(timeout);
    if (outcome.granted?.resourceSubscriptions?.includes(uri)) return;
    this.subscribedUris.delete(uri);
    if (outcome.error) throw outcome.error;
    throw outcome.granted ? this.noSubscriptions(uri, 'the server did not grant it') : this.listenTimeout(timeout);
  }

  async unsubscribe(uri: string, timeout: number | undefined): Promise<void> {
    if (!this.subscribedUris.delete(uri)) return;
    await this.update(timeout);
  }

  /**
   * 2026: opens a `subscriptions/listen` for what the session wants now (the list changes
   * the server declares, the subscribed URIs), waits for its acknowledgement (bounded),
   * then cancels the listen it replaces, so no notification falls in a gap. Resolves with
   * what the server granted; undefined when it did not acknowledge in time or refused.
   */
  update(timeout?: number): Promise<ListenOutcome> {
    const next = this.relisten.then(() => this.listen(timeout));
    this.relisten = next.catch(() => undefined);
    return next;
  }

  private async listen(timeout = Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout)): Promise<ListenOutcome> {
    const previous = this.listening;
    const stopPrevious = () => {
      if (previous && this.listening !== previous) this.engine.cancel(previous.id, new McpError('cancelled', 'replaced by a new subscriptions/listen', { server: this.name }));
    };
    const caps = this.capabilities();
    const filter: ListenFilter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
      ...(this.subscribedUris.size > 0 ? { resourceSubscriptions: [...this.subscribedUris] } : {}),
    };
    if (Object.keys(filter).length === 0 || this.engine.closedReason !== undefined) {
      this.listening = undefined;
      stopPrevious();
      return { granted: {} };
    }
    let acknowledged!: (granted: ListenFilter) => void;
    const ack = new Promise<ListenFilter>((resolve) => (acknowledged = resolve));
    const current = { id: 0 };
    const done = this.engine.request(
      {
        method: 'subscriptions/listen',
        params: withEnvelope({ notifications: filter }, this.host.clientInfo, this.host.clientCapabilities()),
        phase: 'subscriptions/listen',
        onId: (id) => {
          current.id = id;
          this.acks.set(id, acknowledged);
        },
      },
      // It lasts as long as the session: its answer is the server ending it.
      { timeout: Infinity },
    );
    this.listening = current;
    // An answer (the server's graceful end), an error (a server without listen) or a cancel all end it.
    const ended = done.then(
      (): ListenOutcome => ({}),
      (error: McpError): ListenOutcome => ({ error }),
    );
    void ended.then(() => {
      this.acks.delete(current.id);
      if (this.listening === current) this.listening = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        ack.then((granted): ListenOutcome => ({ granted })),
        ended,
        new Promise<ListenOutcome>((resolve) => (timer = setTimeout(() => resolve({}), timeout))),
      ]);
      // Keep the old listen until the new one is in place; if the new one failed, the old one goes too.
      stopPrevious();
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  private noSubscriptions(uri: string, why: string): McpError {
    const message = `resource subscriptions are not supported: ${why}`;
    return new McpError('rpc-error', `${serverLabel(this.name)}subscriptions/listen for ${JSON.stringify(uri)} failed: ${message}`, {
      server: this.name,
      phase: 'resources/subscribe',
      rpc: { code: METHOD_NOT_FOUND, message },
    });
  }

  private listenTimeout(timeout = Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout)): McpError {
    return new McpError('timeout', `${serverLabel(this.name)}subscriptions/listen was not acknowledged within ${timeout} ms`, { server: this.name, phase: 'subscriptions/listen' });
  }

}
