import { createServer } from 'node:http';
import { McpError } from '../../../errors.js';
import { openInBrowser } from './browser.js';
import type { Authorize } from './authorization-code.js';
import { insecure, shownUrl } from './url-guard.js';

export interface LoopbackAuthorizeOptions {
  /** How long to wait for the browser to come back (ms); default 300000 (5 minutes). */
  timeoutMs?: number;
  /** Where the URL is shown; default: a line on stderr. */
  print?: (url: URL, server: string) => void;
  /** Whether to try opening the URL in a browser; default: when a desktop seems present. */
  open?: boolean;
  signal?: AbortSignal;
}

/**
 * An `authorize` step for a terminal: listens on the loopback redirect URI the authorization
 * URL names (`redirect_uri`, `http://127.0.0.1:<port>/<path>`, the provider's default), shows
 * the URL (and opens it on a desktop), and resolves with the URL the browser was sent back to.
 * The listener is closed when it resolves, rejects or times out.
 */
export function loopbackAuthorize(options: LoopbackAuthorizeOptions = {}): Authorize {
  return (url, server) => awaitRedirect(url, server, options);
}

async function awaitRedirect(url: URL, server: string, options: LoopbackAuthorizeOptions): Promise<URL> {
  const label = `server ${JSON.stringify(server)}: `;
  const fail = (message: string, cause?: unknown) =>
    new McpError('auth-required', `${label}${message}`, { server, phase: 'auth', ...(cause === undefined ? {} : { cause }) });
  // Nothing but an https URL (http on loopback) is shown or opened: a file: or javascript: URL a server named is refused.
  const why = insecure(url);
  if (why !== undefined) throw fail(`refusing the authorization URL ${shownUrl(url)}: ${why}`);
  let redirect: URL;
  try {
    redirect = new URL(url.searchParams.get('redirect_uri') ?? '');
  } catch (error) {
    throw fail(`the authorization URL has no usable redirect_uri`, error);
  }
  if (redirect.protocol !== 'http:' || (redirect.hostname !== '127.0.0.1' && redirect.hostname !== 'localhost')) {
    throw fail(`the redirect URI ${redirect.href} is not a loopback http URI; a terminal login needs one (leave "redirectUri" unset)`);
  }
  const timeoutMs = options.timeoutMs ?? 300_000;
  let settle: { resolve: (u: URL) => void; reject: (e: unknown) => void } | undefined;
  const done = new Promise<URL>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited below unless listening fails first; then its rejection is no one's news.
  done.catch(() => {});
  const listener = createServer((req, res) => {
    const arrived = new URL(req.url ?? '/', redirect.origin);
    if (req.method !== 'GET' || arrived.pathname !== redirect.pathname) {
      res.writeHead(404).end();
      return;
    }
    const error = arrived.searchParams.get('error');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    res.end(
      error === null
        ? '<!doctype html><title>Authorized</title><p>Authorization complete. You can close this window.</p>'
        : `<!doctype html><title>Not authorized</title><p>Authorization failed: ${escapeHtml(error)}.</p>`,
    );
    // The provider checks state, issuer and errors; this only hands the URL back.
    settle?.resolve(arrived);
  });
  const timer = setTimeout(() => settle?.reject(fail(`no authorization within ${timeoutMs} ms; run the login again`)), timeoutMs);
  const onAbort = () => settle?.reject(new McpError('cancelled', `${label}login was cancelled`, { server, phase: 'auth' }));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (options.signal?.aborted) onAbort();
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(Number(redirect.port || 80), redirect.hostname === 'localhost' ? '127.0.0.1' : redirect.hostname, () => resolve());
    }).catch((error: unknown) => {
      throw fail(`cannot listen on ${redirect.host} for the redirect (${(error as NodeJS.ErrnoException).code ?? error})`, error);
    });
    (options.print ?? printToStderr)(url, server);
    if (options.open ?? hasDesktop()) openInBrowser(url);
    return await done;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }
}

function printToStderr(url: URL, server: string): void {
  process.stderr.write(`To authorize ${JSON.stringify(server)}, open this URL in a browser:\n\n  ${url.href}\n\n`);
}

function hasDesktop(): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `http://127.0.0.1:<port>/callback` with a port free right now, for a loopback redirect listener. */
export async function loopbackRedirectUri(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}/callback`;
}
