import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { safeEnvironment } from '../../../../src/transport/stdio/child-env.js';
import type { AuthProvider } from '../../../../src/transport/http/auth-provider.js';
import { repoRoot } from '../../../support/fixtures.js';

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization?: string;
  body: string;
}

/** test/fixtures/oauth-server.mjs running in a child: a protected resource and its authorization server. */
export interface OAuthFixture {
  url: string;
  /** The protected MCP endpoint. */
  resource: URL;
  child: ChildProcess;
  log(): Promise<LoggedRequest[]>;
  close(): Promise<void>;
}

export async function startOAuthFixture(options: Record<string, unknown> = {}): Promise<OAuthFixture> {
  const child = spawn(process.execPath, [resolve(repoRoot, 'test/fixtures/oauth-server.mjs'), JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: safeEnvironment(),
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('oauth fixture did not start within 10 s')), 10_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolveUrl((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`oauth fixture exited (${code}) before listening`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  let closing: Promise<void> | undefined;
  return {
    url,
    resource: new URL(`${url}/mcp`),
    child,
    log: async () => (await (await fetch(`${url}/_log`)).json()) as LoggedRequest[],
    close: () =>
      (closing ??= (async () => {
        lines.close();
        child.stdin!.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      })()),
  };
}

/** The browser of a test: follows the authorization URL to its redirect without following that. */
export async function followAuthorization(url: URL): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  await response.body?.cancel();
  if (response.status !== 302 || !location) throw new Error(`authorize endpoint answered ${response.status}`);
  return new URL(location);
}

/**
 * What an HTTP transport does with an {@link AuthProvider}: send with its header, and on a
 * 401 (or a 403 asking for scope) ask it once and send again.
 */
export async function callResource(auth: AuthProvider, resource: URL, method = 'tools/list'): Promise<Response> {
  const send = async () => {
    const authorization = await auth.authorization();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization) headers.authorization = authorization;
    const response = await fetch(resource, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }) });
    return { response, authorization };
  };
  let { response, authorization } = await send();
  const www = response.headers.get('www-authenticate');
  if (response.status === 401 || (response.status === 403 && /insufficient_scope/.test(www ?? ''))) {
    await response.body?.cancel();
    await auth.unauthorized({
      status: response.status as 401 | 403,
      wwwAuthenticate: www,
      resourceUrl: resource,
      ...(authorization === undefined ? {} : { authorization }),
    });
    ({ response } = await send());
  }
  return response;
}
