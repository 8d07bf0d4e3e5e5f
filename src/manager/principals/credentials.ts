import { McpError, serverLabel } from '../../errors.js';
import type { InstanceSpec } from './entry-fields.js';
import type { CredentialsResolver, PrincipalScope } from './principal-scope.js';

/**
 * The credential values one instance of `server` is made with, for the work in `scope`:
 * the session's own `principal.credentials`, else the manager's resolver (asked once per
 * session and server). Rejects `auth-required` naming what is missing, never a value.
 */
export async function credentialsFor(
  server: string,
  spec: InstanceSpec,
  scope: PrincipalScope | undefined,
  resolver: CredentialsResolver | undefined,
): Promise<Record<string, string>> {
  const principal = scope?.principal;
  if (!principal) {
    if (spec.mode === 'per-principal') {
      throw new McpError('auth-required', `${serverLabel(server)}runs one instance per principal: call it from a session given one (manager.session({ principal: { id } }))`, {
        server,
        phase: 'auth',
      });
    }
    if (spec.names.length > 0) {
      throw new McpError('auth-required', `${serverLabel(server)}needs the principal credential ${spec.names.join(', ')}: call it from a session given a principal`, { server, phase: 'auth' });
    }
    return {};
  }
  if (spec.names.length === 0) return {};
  const given = principal.credentials ?? {};
  let found: Record<string, string> = given;
  if (resolver && spec.names.some((name) => typeof given[name] !== 'string')) {
    let asked = scope.resolved.get(server);
    if (!asked) {
      asked = Promise.resolve()
        .then(() => resolver(principal, server))
        .then(checkResolved);
      scope.resolved.set(server, asked);
      // A failure is not kept: the next call asks again.
      asked.catch(() => scope.resolved.delete(server));
    }
    let resolved: Record<string, string>;
    try {
      resolved = await asked;
    } catch (error) {
      throw new McpError('auth-required', `${serverLabel(server)}the credentials resolver failed for principal ${JSON.stringify(principal.id)}: ${(error as Error)?.message ?? String(error)}`, {
        server,
        phase: 'auth',
        cause: error,
      });
    }
    found = { ...resolved, ...given };
  }
  const missing = spec.names.filter((name) => typeof found[name] !== 'string' || found[name] === '');
  if (missing.length > 0) {
    throw new McpError(
      'auth-required',
      `${serverLabel(server)}principal ${JSON.stringify(principal.id)} has no credential ${missing.join(', ')}; give it in session({ principal: { credentials } }) or through the manager's credentials resolver`,
      { server, phase: 'auth' },
    );
  }
  const values: Record<string, string> = {};
  for (const name of spec.names) {
    const value = found[name] as string;
    // NUL cannot reach a process; a line break in a header would split the request.
    if (value.includes('\0') || (/[\r\n]/.test(value) && spec.headerNames?.includes(name))) {
      throw new McpError('invalid-arguments', `${serverLabel(server)}credential ${name} of principal ${JSON.stringify(principal.id)} holds a NUL or line break, which it cannot be sent with`, {
        server,
        phase: 'auth',
      });
    }
    values[name] = value;
  }
  return values;
}

function checkResolved(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`it must resolve with an object of strings, got ${value === null ? 'null' : typeof value}`);
  for (const [name, item] of Object.entries(value)) if (typeof item !== 'string') throw new Error(`its ${name} must be a string, got ${typeof item}`);
  return value as Record<string, string>;
}
