import type { McpClient } from '../../protocol/client.js';
import { callIsolated } from '../../util/listeners.js';

type OnUpdated = (uri: string) => void;

interface Topic {
  listeners: Set<OnUpdated>;
  /** The subscribe request, shared by every subscriber that comes while it is in flight. */
  subscribed: Promise<void>;
  /** The connection the server accepted it on; a later connection must be told again. */
  on?: McpClient;
}

/**
 * Resource subscriptions of the whole pool, counted per server and uri: the server is
 * asked once however many sessions subscribe, and told to stop when the last one leaves.
 * After a restart the live topics are subscribed again on the new connection.
 */
export class Subscriptions {
  private readonly topics = new Map<string, Map<string, Topic>>();

  constructor(
    /** Runs a request on the server, starting it first; with `onlyIfRunning`, skips a server that is not running. */
    private readonly run: (server: string, work: (client: McpClient) => Promise<void>, onlyIfRunning?: boolean) => Promise<void>,
  ) {}

  /** Adds a subscriber; resolves once the server has accepted the subscription, with its unsubscribe. */
  async subscribe(server: string, uri: string, onUpdated: OnUpdated): Promise<() => Promise<void>> {
    let byUri = this.topics.get(server);
    if (!byUri) this.topics.set(server, (byUri = new Map()));
    let topic = byUri.get(uri);
    if (!topic) {
      const fresh: Topic = { listeners: new Set(), subscribed: Promise.resolve() };
      fresh.subscribed = this.run(server, async (client) => {
        await client.subscribeResource(uri);
        fresh.on = client;
      });
      topic = fresh;
      byUri.set(uri, fresh);
      // A refused subscription is forgotten, so the next subscriber asks again.
      fresh.subscribed.catch(() => byUri.get(uri) === fresh && byUri.delete(uri));
    }
    // Each subscription is its own entry, even when one function subscribes twice.
    const listener: OnUpdated = (u) => onUpdated(u);
    topic.listeners.add(listener);
    try {
      await topic.subscribed;
    } catch (error) {
      topic.listeners.delete(listener);
      throw error;
    }
    let done: Promise<void> | undefined;
    return () => (done ??= this.leave(server, uri, topic, listener));
  }

  /** `notifications/resources/updated` from a server. */
  updated(server: string, uri: string): void {
    for (const listener of [...(this.topics.get(server)?.get(uri)?.listeners ?? [])]) callIsolated('McpServerManager', 'resourceUpdated', listener, [uri]);
  }

  /** A new connection to a server: its live topics are subscribed again (best effort). */
  reconnected(server: string, client: McpClient): void {
    for (const [uri, topic] of this.topics.get(server) ?? []) {
      // A subscription still in flight is being made on this connection already.
      if (topic.on === undefined || topic.on === client) continue;
      topic.on = client;
      void client.subscribeResource(uri).catch(() => undefined);
    }
  }

  /** Whether anyone still listens to this uri. */
  has(server: string, uri: string): boolean {
    return (this.topics.get(server)?.get(uri)?.listeners.size ?? 0) > 0;
  }

  private async leave(server: string, uri: string, topic: Topic, listener: OnUpdated): Promise<void> {
    topic.listeners.delete(listener);
    const byUri = this.topics.get(server);
    if (topic.listeners.size > 0 || byUri?.get(uri) !== topic) return;
    byUri.delete(uri);
    if (byUri.size === 0) this.topics.delete(server);
    // Unsubscribing never starts a server: one that is not running holds no subscription.
    await this.run(server, (client) => client.unsubscribeResource(uri), true).catch(() => undefined);
  }
}
