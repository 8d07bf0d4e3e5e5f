import { AsyncLocalStorage } from 'node:async_hooks';
import { McpError } from '../../errors.js';

/** Who a session acts for: an id, and credentials its per-principal servers may be given. */
export interface Principal {
  id: string;
  /** Values for the `${principal:NAME}` placeholders of server entries. Never cached, logged or shown. */
  credentials?: Record<string, string>;
}

/** Resolves a principal's credentials for one server (the manager's `credentials` option). */
export type CredentialsResolver = (principal: Principal, server: string) => Promise<Record<string, string>> | Record<string, string>;

/**
 * Who the work in flight is for: the session (by a private id) and its principal. Carried
 * through the pool with AsyncLocalStorage so the listing, routing and call code, written
 * once for every caller, needs no principal parameter: only instanced servers read it.
 */
export interface PrincipalScope {
  /** Unique per session in this process; what `per-session` instances are keyed by. */
  readonly session: string;
  readonly principal?: Principal;
  /** Per server, the credentials resolved for this session (the resolver is asked once). */
  readonly resolved: Map<string, Promise<Record<string, string>>>;
}

const storage = new AsyncLocalStorage<PrincipalScope>();
let sessions = 0;

/** A fresh session id, unique in this process. */
export function nextSessionId(): string {
  return `session-${++sessions}`;
}

/** A new session's scope. */
export function newScope(principal: Principal | undefined): PrincipalScope {
  return { session: nextSessionId(), ...(principal ? { principal: frozenPrincipal(principal) } : {}), resolved: new Map() };
}

const callerSessions = new WeakMap<object, string>();

/**
 * With two arguments: a caller of its own for the session of `scope` (the same handlers),
 * so the servers' questions and `unrouted` events can name it. With one: the session a
 * caller belongs to, if it was made so.
 */
export function sessionOf<C extends { handlers: unknown }>(caller: C, scope: PrincipalScope): C;
export function sessionOf(caller: object): string | undefined;
export function sessionOf(caller: object, scope?: PrincipalScope): unknown {
  if (scope === undefined) return callerSessions.get(caller);
  const own = { ...(caller as object) };
  callerSessions.set(own, scope.session);
  return own;
}

/** The scope of the work in flight; undefined for the manager's own calls. */
export function currentScope(): PrincipalScope | undefined {
  return storage.getStore();
}

/** Runs `work` in `scope`. */
export function inScope<T>(scope: PrincipalScope, work: () => T): T {
  return storage.run(scope, work);
}

/** `target` with every method running in `scope` (a session, so that the pool code its methods run sees whom it is for). */
export function scoped<T extends object>(target: T, scope: PrincipalScope): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, key) {
      const value = Reflect.get(object, key, object) as unknown;
      if (typeof value !== 'function') return value;
      let out = wrapped.get(key);
      if (out === undefined) {
        out = (...args: unknown[]) => inScope(scope, () => (value as (...a: unknown[]) => unknown).apply(object, args));
        wrapped.set(key, out);
      }
      return out;
    },
  });
}

/** Checks a session's `principal` option, naming the field and the value (never a credential's value). */
export function checkPrincipal(value: unknown): Principal | undefined {
  if (value === undefined) return undefined;
  const fail = (message: string) => new McpError('invalid-arguments', `session option principal${message}`, {});
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(` must be an object { id, credentials? }, got ${typeof value}`);
  const { id, credentials } = value as { id?: unknown; credentials?: unknown };
  if (typeof id !== 'string' || id === '' || id.length > 256 || /[\0-\x1f]/.test(id)) {
    throw fail(`.id must be a non-empty string of at most 256 characters without control characters, got ${typeof id === 'string' ? JSON.stringify(id.slice(0, 60)) : typeof id}`);
  }
  if (credentials !== undefined) {
    if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)) throw fail(`.credentials must be an object of strings, got ${typeof credentials}`);
    for (const [name, item] of Object.entries(credentials)) {
      // The value is a secret: its type is told, never the value.
      if (typeof item !== 'string') throw fail(`.credentials.${name} must be a string, got ${item === null ? 'null' : typeof item}`);
    }
  }
  return value as Principal;
}

/** A copy the host cannot change under a running instance. */
function frozenPrincipal(principal: Principal): Principal {
  return Object.freeze({ id: principal.id, ...(principal.credentials ? { credentials: Object.freeze({ ...principal.credentials }) } : {}) });
}
