import * as oauth from 'oauth4webapi';

/** What a `Bearer` challenge in `WWW-Authenticate` tells the client (RFC 6750, RFC 9728). */
export interface BearerChallenge {
  error?: string;
  errorDescription?: string;
  /** The scopes the resource asks for (space-separated). */
  scope?: string;
  /** Where the protected resource metadata is (RFC 9728 §5.1). */
  resourceMetadata?: string;
}

/**
 * The `Bearer` challenge of a `WWW-Authenticate` header, parsed by oauth4webapi (which
 * exposes its parser only through the error it throws for a challenged response), or
 * undefined when the header has none.
 */
export async function parseBearerChallenge(header: string | null | undefined): Promise<BearerChallenge | undefined> {
  if (!header) return undefined;
  let challenges: oauth.WWWAuthenticateChallenge[] = [];
  try {
    await oauth.processRevocationResponse(new Response(null, { status: 401, headers: { 'www-authenticate': header } }));
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) challenges = error.cause;
  }
  const bearer = challenges.find((c) => c.scheme === 'bearer');
  if (!bearer) return undefined;
  const p = bearer.parameters;
  const challenge: BearerChallenge = {};
  if (p.error) challenge.error = p.error;
  if (p.error_description) challenge.errorDescription = p.error_description;
  if (p.scope) challenge.scope = p.scope;
  if (p.resource_metadata) challenge.resourceMetadata = p.resource_metadata;
  return challenge;
}
