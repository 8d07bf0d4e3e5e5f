import { McpError } from '../../errors.js';
import { checkLimits, type Limits } from './access.js';
import { checkJwtAuth, type JwtAuthOptions } from './jwt-front.js';
import { checkPolicies, type Policy } from './policies.js';

/** What `lazy-mcp serve --http` takes for principals, from its flags or the config's `"gateway"` section. */
export interface GatewayPrincipals {
  auth?: JwtAuthOptions;
  policies?: Policy[];
  limits?: Limits;
  /** A secrets file or folder: the principals' credentials. */
  secrets?: string;
}

/** The flags `serve` passes on (`--auth jwt --issuer … --audience … --jwks-url … --jwt-alg … --secrets …`). */
export interface PrincipalFlags {
  auth?: string;
  issuer?: string;
  audience?: string;
  'jwks-url'?: string;
  'jwt-alg'?: string;
  secrets?: string;
}

/**
 * Reads the principals' part of the gateway's setup: flags win over the config's
 * `gateway.auth` (`{ "type": "jwt", issuer, audience, jwksUrl, algorithms?, … }`),
 * `gateway.policies`, `gateway.limits` and `gateway.secrets`. Throws `invalid-config`
 * naming the flag or field.
 */
export function gatewayPrincipals(flags: PrincipalFlags, section: Record<string, unknown>, where: string): GatewayPrincipals {
  const fail = (message: string) => new McpError('invalid-config', message, { phase: 'config' });
  const fromSection = section.auth;
  if (fromSection !== undefined && (typeof fromSection !== 'object' || fromSection === null || Array.isArray(fromSection))) {
    throw fail(`${where}: gateway.auth must be an object { "type": "jwt", issuer, audience, jwksUrl }, got ${JSON.stringify(fromSection)}`);
  }
  const { type: sectionType, ...sectionAuth } = (fromSection ?? {}) as Record<string, unknown>;
  const type = flags.auth ?? sectionType;
  const jwtFlags = [flags.issuer, flags.audience, flags['jwks-url'], flags['jwt-alg']].some((f) => f !== undefined);
  if (type !== undefined && type !== 'jwt') throw fail(`${flags.auth !== undefined ? '--auth' : `${where}: gateway.auth.type`} must be "jwt", got ${JSON.stringify(type)}`);
  if (type === undefined && jwtFlags) throw fail('--issuer, --audience, --jwks-url and --jwt-alg need --auth jwt');
  let auth: JwtAuthOptions | undefined;
  if (type === 'jwt') {
    const merged = {
      ...sectionAuth,
      ...(flags.issuer === undefined ? {} : { issuer: flags.issuer }),
      ...(flags.audience === undefined ? {} : { audience: flags.audience }),
      ...(flags['jwks-url'] === undefined ? {} : { jwksUrl: flags['jwks-url'] }),
      ...(flags['jwt-alg'] === undefined ? {} : { algorithms: flags['jwt-alg'].split(',').map((a) => a.trim()) }),
    } as Partial<JwtAuthOptions>;
    auth = checkJwtAuth(merged, `${where}: gateway.auth`);
  }
  const policies = section.policies === undefined ? undefined : checkPolicies(section.policies, `${where}: gateway.policies`);
  const limits = section.limits === undefined ? undefined : checkLimits(section.limits, `${where}: gateway.limits`);
  const secrets = flags.secrets ?? section.secrets;
  if (secrets !== undefined && (typeof secrets !== 'string' || secrets === '')) throw fail(`${where}: gateway.secrets must be a file or folder path, got ${JSON.stringify(secrets)}`);
  if (!auth && (policies || limits || secrets !== undefined)) {
    throw fail(`${policies ? 'gateway.policies' : limits ? 'gateway.limits' : secrets === flags.secrets ? '--secrets' : 'gateway.secrets'} applies to verified callers: give --auth jwt (or gateway.auth)`);
  }
  return { ...(auth ? { auth } : {}), ...(policies ? { policies } : {}), ...(limits ? { limits } : {}), ...(secrets === undefined ? {} : { secrets: secrets as string }) };
}
