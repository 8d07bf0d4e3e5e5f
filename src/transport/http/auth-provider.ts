/**
 * What an HTTP transport needs from OAuth, so that the transport knows nothing of the
 * flow and the flow nothing of the transport. The OAuth client in `./oauth/` implements it.
 */
export interface AuthProvider {
  /** The `Authorization` header value for the next request, or undefined when no token is held. */
  authorization(): Promise<string | undefined>;
  /**
   * A request was answered 401 (or 403 with `insufficient_scope`). `wwwAuthenticate` is the
   * response's `WWW-Authenticate` header. Resolves `'retry'` when a new token was obtained
   * without user interaction (refresh) or through the interactive step it was allowed
   * to run (step-up with the host's `authorize`); otherwise rejects with an `McpError`
   * coded `auth-required` saying what to do (`login(server)`). `authorization`, when given,
   * is the header the refused request carried: a request sent with a token that has since
   * been renewed is then retried at once instead of renewing again. Call it at most once
   * or twice per request: the provider bounds its own refreshes and step-ups, not retries.
   */
  unauthorized(challenge: { status: 401 | 403; wwwAuthenticate: string | null; resourceUrl: URL; authorization?: string }): Promise<'retry'>;
}
