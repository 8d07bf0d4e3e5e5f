/**
 * The platform fetch's dispatcher type. undici 7's `Agent` serves Node 20's fetch (its
 * dispatch takes the older handler shape too); only the two packages' type declarations differ.
 */
type Dispatcher = NonNullable<RequestInit['dispatcher']>;

/**
 * The HTTP connections of one channel: an undici `Agent` of its own, so that closing the
 * channel closes its keep-alive sockets. Through the platform's global dispatcher they
 * stayed open for seconds after a shutdown (3 per server), and nothing could close them
 * without closing everyone else's. Node 20's `fetch` takes the agent as its `dispatcher`.
 * undici is loaded with the first request, so a host without HTTP servers never loads it.
 */
export class ConnectionPool {
  private agent: Dispatcher | undefined;
  private loading: Promise<Dispatcher> | undefined;
  private closing: Promise<void> | undefined;

  /** The platform's `fetch` over this pool's connections. */
  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const agent = this.agent;
    if (agent) return fetch(input, { ...init, dispatcher: agent });
    return this.load().then((loaded) => fetch(input, { ...init, dispatcher: loaded }));
  };

  /** Closes every connection at once (requests still on them fail). Idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const agent = this.agent ?? (await this.loading?.catch(() => undefined));
      await agent?.destroy().catch(() => undefined);
    })();
    return this.closing;
  }

  private load(): Promise<Dispatcher> {
    this.loading ??= import('undici').then(({ Agent }) => {
      const agent = new Agent() as unknown as Dispatcher;
      // A request made after close() fails as on a closed pool, with no socket left behind.
      if (this.closing) void agent.destroy().catch(() => undefined);
      return (this.agent = agent);
    });
    return this.loading;
  }
}
