import type { McpClient } from '../../protocol/client.js';
import type { Tool } from '../../protocol/types.js';

/**
 * The live tool listing a start owes when it was ready on known tools (an earlier
 * connection's, or the cache's). With requests waiting for the start it is sent once the
 * first of them has its answer, or once someone waits for the listing: sent beside them,
 * its answer comes in the same read and is parsed before theirs. One per slot.
 */
export class Relisting {
  private pending: Promise<void> | undefined;
  /** Sends the listing, while it waits for the first answer on the connection. */
  private sendNow: (() => void) | undefined;

  /**
   * Lists `client`'s tools: `afterFirst`, once {@link soon} is called; else on the next
   * turn. `land` gets the tools and `failed` the error; neither is awaited by anyone but
   * {@link listed}, and nothing rejects.
   */
  begin(client: McpClient, afterFirst: boolean, land: (tools: Tool[]) => unknown, failed: (error: unknown) => void): void {
    // What `land` or `failed` throws ends here: those who wait for the listing only wait.
    const listing: Promise<void> = new Promise<void>((resolve) => {
      if (afterFirst) this.sendNow = resolve;
      else setImmediate(resolve);
    })
      .then(() => client.listTools())
      .then(land, failed)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        if (this.pending === listing) this.pending = undefined;
      });
    this.pending = listing;
  }

  /** Whether a listing is owed or on its way. */
  get due(): boolean {
    return this.pending !== undefined;
  }

  /** Settles once the owed listing has landed (at once if none is due); sends it if not yet sent. Never rejects. */
  get listed(): Promise<void> {
    this.soon();
    return this.pending ?? Promise.resolve();
  }

  /** Sends the owed listing if it has not gone out yet (a request on the connection has its answer). */
  soon(): void {
    const send = this.sendNow;
    if (send === undefined) return;
    this.sendNow = undefined;
    send();
  }
}
