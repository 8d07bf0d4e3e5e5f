import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { McpError } from '../../errors.js';
import type { Principal } from '../../manager/principals/principal-scope.js';

/** The gateway as an OAuth 2.1 resource server: how bearer JWTs are checked. */
export interface JwtAuthOptions {
  /** The authorization server; the token's `iss` must equal it. */
  issuer: string;
  /** The token's `aud` must hold one of these (this gateway's resource identifier). */
  audience: string | string[];
  /** The issuer's JSON Web Key Set: https, or http on loopback. */
  jwksUrl: string;
  /** Signature algorithms accepted. Default `["RS256", "PS256", "ES256", "EdDSA"]`; `none` and HMAC never. */
  algorithms?: string[];
  /** Leeway for `exp` and `nbf`, in seconds. Default 30. */
  clockToleranceSec?: number;
  /** Least time between two fetches of the key set (an unknown `kid` fetches it again), in ms. Default 30000. */
  jwksCooldownMs?: number;
  /** Scopes the metadata lists as supported. */
  scopesSupported?: string[];
  /** The resource identifier the metadata names. Default: the gateway's endpoint URL. */
  resource?: string;
}

/** Who a verified token says is calling. */
export interface Identity {
  principal: Principal;
  /** The token's `scope` (space-separated) or `scp` claim. */
  scopes: string[];
  claims: JWTPayload;
}

/** Why a request is refused: the HTTP status, and for 401 the `WWW-Authenticate` error. */
export class BearerRefusal extends Error {
  constructor(
    readonly status: 401 | 503,
    message: string,
    /** RFC 6750 error code, absent when no token was sent at all. */
    readonly error?: 'invalid_token' | 'invalid_request',
  ) {
    super(message);
  }
}

const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);
const MAX_TOKEN_CHARS = 16 * 1024;

/** Checks the options, naming the field and the value; throws `invalid-config`. */
export function checkJwtAuth(options: Partial<JwtAuthOptions>, where = 'gateway.auth'): JwtAuthOptions {
  const fail = (field: string, message: string) => new McpError('invalid-config', `${where}.${field} ${message}`, { phase: 'config' });
  const text = (field: keyof JwtAuthOptions) => {
    const value = options[field];
    if (typeof value !== 'string' || value === '') throw fail(field, `must be a non-empty string, got ${JSON.stringify(value) ?? String(value)}`);
    return value;
  };
  const issuer = text('issuer');
  const jwksUrl = text('jwksUrl');
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    throw fail('jwksUrl', `must be an absolute URL, got ${JSON.stringify(jwksUrl)}`);
  }
  const loopback = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/i.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw fail('jwksUrl', `must be an https URL (http only on loopback), got ${JSON.stringify(jwksUrl)}`);
  const audience = options.audience;
  if (!(typeof audience === 'string' && audience !== '') && !(Array.isArray(audience) && audience.length > 0 && audience.every((a) => typeof a === 'string' && a !== ''))) {
    throw fail('audience', `must be a non-empty string or array of them, got ${JSON.stringify(audience) ?? String(audience)}`);
  }
  const algorithms = options.algorithms ?? DEFAULT_ALGORITHMS;
  if (!Array.isArray(algorithms) || algorithms.length === 0) throw fail('algorithms', `must be a non-empty array, got ${JSON.stringify(algorithms)}`);
  for (const alg of algorithms) {
    // `none` would accept any unsigned token; a shared-secret algorithm has no place beside a public key set.
    if (!ASYMMETRIC.has(alg)) throw fail('algorithms', `may hold only asymmetric algorithms (${[...ASYMMETRIC].join(', ')}), got ${JSON.stringify(alg)}`);
  }
  const number = (field: 'clockToleranceSec' | 'jwksCooldownMs') => {
    const value = options[field];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && Number.isFinite(value))) throw fail(field, `must be a non-negative number, got ${JSON.stringify(value)}`);
    return value;
  };
  const clockToleranceSec = number('clockToleranceSec');
  const jwksCooldownMs = number('jwksCooldownMs');
  const scopes = options.scopesSupported;
  if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((s) => typeof s === 'string'))) throw fail('scopesSupported', `must be an array of strings, got ${JSON.stringify(scopes)}`);
  if (options.resource !== undefined) text('resource');
  return {
    issuer,
    audience,
    jwksUrl,
    algorithms,
    ...(clockToleranceSec === undefined ? {} : { clockToleranceSec }),
    ...(jwksCooldownMs === undefined ? {} : { jwksCooldownMs }),
    ...(scopes === undefined ? {} : { scopesSupported: scopes }),
    ...(options.resource === undefined ? {} : { resource: options.resource }),
  };
}

/**
 * Verifies bearer JWTs: the signature against the issuer's key set (fetched, cached, and
 * fetched again for an unknown `kid` at most once per cooldown), `iss`, `aud`, `exp`, `nbf`
 * and the algorithm against the configured list. `jose` is loaded with the first verifier.
 */
export class JwtVerifier {
  private constructor(
    private readonly options: JwtAuthOptions,
    private readonly jose: typeof import('jose'),
    private readonly keys: JWTVerifyGetKey,
  ) {}

  static async create(options: JwtAuthOptions): Promise<JwtVerifier> {
    const checked = checkJwtAuth(options);
    const jose = await import('jose');
    const keys = jose.createRemoteJWKSet(new URL(checked.jwksUrl), {
      cooldownDuration: checked.jwksCooldownMs ?? 30_000,
      cacheMaxAge: 10 * 60_000,
      timeoutDuration: 5000,
    });
    return new JwtVerifier(checked, jose, keys);
  }

  /** The caller an `Authorization` header proves, or a {@link BearerRefusal} saying why not (never quoting the token). */
  async verify(authorization: string | undefined): Promise<Identity> {
    if (authorization === undefined || authorization === '') throw new BearerRefusal(401, 'a bearer token is required');
    const match = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization);
    if (!match) throw new BearerRefusal(401, 'the Authorization header must be "Bearer <token>"', 'invalid_request');
    const token = match[1] as string;
    if (token.length > MAX_TOKEN_CHARS) throw new BearerRefusal(401, `the token is longer than ${MAX_TOKEN_CHARS} characters`, 'invalid_token');
    let payload: JWTPayload;
    try {
      ({ payload } = await this.jose.jwtVerify(token, this.keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: this.options.algorithms ?? DEFAULT_ALGORITHMS,
        clockTolerance: this.options.clockToleranceSec ?? 30,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw this.refusal(error);
    }
    const sub = payload.sub as string;
    if (sub === '' || sub.length > 256 || /[\0-\x1f]/.test(sub)) throw new BearerRefusal(401, 'the token\'s sub is not a usable principal id', 'invalid_token');
    return { principal: { id: sub }, scopes: scopesOf(payload), claims: payload };
  }

  /** RFC 9728 protected-resource metadata for the endpoint at `resource`. */
  metadata(resource: string): Record<string, unknown> {
    return {
      resource: this.options.resource ?? resource,
      authorization_servers: [this.options.issuer],
      bearer_methods_supported: ['header'],
      resource_signing_alg_values_supported: this.options.algorithms ?? DEFAULT_ALGORITHMS,
      ...(this.options.scopesSupported ? { scopes_supported: this.options.scopesSupported } : {}),
    };
  }

  private refusal(error: unknown): BearerRefusal {
    const code = (error as { code?: string })?.code;
    const claim = (error as { claim?: string })?.claim;
    switch (code) {
      case 'ERR_JWT_EXPIRED':
        return new BearerRefusal(401, 'the token has expired', 'invalid_token');
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
        if (claim === 'nbf') return new BearerRefusal(401, 'the token is not valid yet (nbf)', 'invalid_token');
        if (claim === 'aud') return new BearerRefusal(401, 'the token is for another audience (aud)', 'invalid_token');
        if (claim === 'iss') return new BearerRefusal(401, 'the token is from another issuer (iss)', 'invalid_token');
        return new BearerRefusal(401, `the token's ${claim ?? 'claims'} did not check out`, 'invalid_token');
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return new BearerRefusal(401, 'the token is signed with an algorithm this gateway does not accept', 'invalid_token');
      case 'ERR_JWKS_NO_MATCHING_KEY':
        return new BearerRefusal(401, 'no key of the issuer matches the token (unknown kid)', 'invalid_token');
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return new BearerRefusal(401, 'the token\'s signature does not verify', 'invalid_token');
      case 'ERR_JWKS_TIMEOUT':
        return new BearerRefusal(503, 'the issuer\'s key set did not answer in time; retry later');
      case 'ERR_JWKS_INVALID':
      case 'ERR_JOSE_GENERIC':
        return new BearerRefusal(503, 'the issuer\'s key set cannot be fetched; retry later');
      default:
        return new BearerRefusal(401, 'the token is malformed or cannot be verified', 'invalid_token');
    }
  }
}

function scopesOf(payload: JWTPayload): string[] {
  const scope = payload.scope ?? payload.scp;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scope)) return scope.filter((s): s is string => typeof s === 'string');
  return [];
}

/** The `WWW-Authenticate` value of a 401: where the metadata is, and the error when a token was sent. */
export function challenge(metadataUrl: string, refusal: BearerRefusal): string {
  const quoted = (text: string) => `"${text.replace(/["\\]/g, '')}"`;
  return `Bearer resource_metadata=${quoted(metadataUrl)}${refusal.error ? `, error=${quoted(refusal.error)}, error_description=${quoted(refusal.message)}` : ''}`;
}
