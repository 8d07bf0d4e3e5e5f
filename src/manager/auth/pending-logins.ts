import { McpError, serverLabel } from '../../errors.js';
import type { OAuthProvider, PendingAuthorization } from '../../transport/http/oauth/provider-types.js';

/** How long a handed-out authorization URL waits for its redirect, in ms (the loopback login's default). */
export const PENDING_LOGIN_MS = 300_000;
/** Authorizations in wait at once; past it the oldest is given up (its listener closed). */
const MAX_PENDING = 256;

interface Pending {
  key: string;
  server: string;
  /** Settles once the URL can be handed out (the loopback listener is up). */
  ready: Promise<PendingAuthorization>;
  authorization?: PendingAuthorization;
  /** The redirect came back and its code is being exchanged. */
  completing?: Promise<unknown>;
  abort: AbortController;
  timer: NodeJS.Timeout;
}

/**
 * Authorizations begun for a caller that cannot be asked now (a principal's session meeting
 * `auth-required`): the URL is handed out in the error, and the redirect completes it
 * whenever it comes, storing the tokens with the provider that began it, so for that
 * principal and server only. A redirect to a loopback URI (the default) is awaited by the
 * same listener `login` uses; one to the host's own URI is handed back through
 * {@link complete}. One authorization in wait per key: its URL is handed out again until
 * it completes, fails or expires.
 */
export class PendingLogins {
  private readonly byKey = new Map<string, Pending>();
  private readonly byState = new Map<string, Pending>();
  private closed = false;

  constructor(private readonly ttlMs = PENDING_LOGIN_MS) {}

  /**
   * The URL to send `key`'s user to for `provider`'s server: the one in wait, or a new one.
   * Undefined when the redirect of the one in wait came back meanwhile and its tokens are
   * now stored (the next call has them).
   */
  async urlFor(key: string, server: string, provider: OAuthProvider): Promise<URL | undefined> {
    if (this.closed) throw new McpError('closed', `${serverLabel(server)}the manager was shut down`, { server });
    let pending = this.byKey.get(key);
    if (pending?.completing) {
      const done = await pending.completing.then(() => true, () => false);
      if (done) return undefined;
      pending = this.byKey.get(key);
    }
    if (!pending) {
      if (this.byKey.size >= MAX_PENDING) this.drop(this.byKey.values().next().value as Pending);
      pending = this.begin(key, server, provider);
    }
    return (await pending.ready).url;
  }

  /**
   * A redirect brought back by the host (its redirect URI is its own): the authorization in
   * wait whose `state` it carries takes it; resolves once the tokens are stored.
   */
  async complete(redirected: URL): Promise<{ server: string }> {
    const state = redirected.searchParams.get('state');
    const pending = state === null ? undefined : this.byState.get(state);
    if (!pending?.authorization) {
      throw new McpError('invalid-arguments', `no authorization is waiting for the redirect's state ${JSON.stringify(state)} (it completed, expired after ${this.ttlMs} ms, or was never begun here)`, { phase: 'auth' });
    }
    return this.finish(pending, redirected);
  }

  /** Gives up every authorization in wait (their listeners closed). Idempotent. */
  close(): void {
    this.closed = true;
    for (const pending of [...this.byKey.values()]) this.drop(pending);
  }

  private begin(key: string, server: string, provider: OAuthProvider): Pending {
    const abort = new AbortController();
    const pending: Pending = { key, server, abort, ready: undefined as unknown as Promise<PendingAuthorization>, timer: setTimeout(() => this.drop(pending), this.ttlMs) };
    pending.timer.unref();
    pending.ready = (async () => {
      const authorization = await provider.begin();
      pending.authorization = authorization;
      this.byState.set(authorization.state, pending);
      if (isLoopback(authorization.redirectUri)) await this.listen(pending, authorization);
      return authorization;
    })();
    // A failure to begin is the caller's to see once; the next call begins again.
    pending.ready.catch(() => this.drop(pending));
    this.byKey.set(key, pending);
    return pending;
  }

  /** The same loopback listener `login` uses, left waiting: the URL is ready once it listens. */
  private async listen(pending: Pending, authorization: PendingAuthorization): Promise<void> {
    const { loopbackAuthorize } = await import('../../transport/http/oauth/loopback-authorize.js');
    let listening!: () => void;
    const up = new Promise<void>((resolve) => (listening = resolve));
    const redirect = loopbackAuthorize({ print: () => listening(), open: false, timeoutMs: this.ttlMs, signal: pending.abort.signal })(authorization.url, pending.server);
    redirect.then(
      (redirected) => this.finish(pending, redirected).catch(() => undefined),
      () => this.drop(pending),
    );
    await Promise.race([up, redirect.then(() => undefined)]);
  }

  private async finish(pending: Pending, redirected: URL): Promise<{ server: string }> {
    // One redirect per authorization: its state and verifier are spent whatever the outcome.
    if (pending.authorization && this.byState.get(pending.authorization.state) === pending) this.byState.delete(pending.authorization.state);
    pending.completing = pending.authorization!.complete(redirected);
    try {
      await pending.completing;
    } finally {
      this.drop(pending);
    }
    return { server: pending.server };
  }

  private drop(pending: Pending): void {
    clearTimeout(pending.timer);
    if (this.byKey.get(pending.key) === pending) this.byKey.delete(pending.key);
    if (pending.authorization && this.byState.get(pending.authorization.state) === pending) this.byState.delete(pending.authorization.state);
    pending.abort.abort();
  }
}

function isLoopback(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
  } catch {
    return false;
  }
}
