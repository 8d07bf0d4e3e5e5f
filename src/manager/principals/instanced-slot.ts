import { McpError, serverLabel } from '../../errors.js';
import type { McpClient } from '../../protocol/client.js';
import type { CallOptions } from '../../protocol/types.js';
import type { ResolvedRemoteServer, ResolvedServer, ServerEntry } from '../config/config.js';
import { type RequestLabel, ServerSlot, type ServerState, type ServerStatus, type SlotHost, type SlotRequest } from '../pool/server-slot.js';
import { credentialsFor } from './credentials.js';
import { fillPlaceholders, fillStdioConfig, type InstanceSpec } from './entry-fields.js';
import { type CredentialsResolver, currentScope, type Principal, type PrincipalScope } from './principal-scope.js';
import { type Redactor, redactError, redactorOf } from './redact.js';
import { sha256 } from '../../util/lazy-builtins.js';

/** What an instanced slot needs from the manager. */
export interface InstanceHost {
  /**
   * A slot for one instance's entry (same server name); `redact` hides its credentials in
   * what it reports. `principal` (per-principal instances) and `values` (the credentials
   * filled in) let a cluster place the instance by its principal and start it on its owner.
   */
  make(entry: ServerEntry, redact: Redactor, principal: string | undefined, values: Record<string, string>): ServerSlot;
  credentials?: CredentialsResolver;
  /** Grace for an evicted instance's stop, in ms. */
  graceMs?: number;
  /** The URL to send `principal`'s user to for this server's OAuth (an authorization kept in wait); undefined when there is none. */
  authorizationUrl?(config: ResolvedRemoteServer, principal: string): Promise<URL | undefined>;
}

const ALIVE: ReadonlySet<ServerState> = new Set(['starting', 'ready']);

/**
 * A server that runs one instance per principal (or per session): the pool's slot for its
 * name, which never runs a process itself. Each request goes to the instance of the
 * principal (or session) the work in flight is for (see {@link currentScope}), made on
 * first use with that principal's credentials filled into the entry; at most
 * `maxInstances` are alive, the least recently used is taken out first and stops once its
 * calls in flight are over. Idle instances stop after the entry's `idleTimeout`.
 */
export class InstancedSlot extends ServerSlot {
  /** By principal (or session) and credentials; least recently used first. */
  private readonly instances = new Map<string, ServerSlot>();
  /** Each instance's redactor: its failures reach callers without its credentials. */
  private readonly redactors = new WeakMap<ServerSlot, Redactor>();
  /** Each instance's principal, for what its failures tell. */
  private readonly principals = new WeakMap<ServerSlot, string | undefined>();
  private readonly spec: InstanceSpec;

  constructor(
    entry: ServerEntry & { config: ResolvedServer | ResolvedRemoteServer },
    host: SlotHost,
    private readonly owner: InstanceHost,
  ) {
    super(entry, host);
    this.spec = entry.config.instances as InstanceSpec;
  }

  /** Instances alive (starting or ready). */
  get alive(): number {
    let n = 0;
    for (const slot of this.instances.values()) if (ALIVE.has(slot.state)) n++;
    return n;
  }

  /** The instance of the work in flight, when it has one; else the pool's slot's own state (`idle` until closed). */
  override get state(): ServerState {
    return this.peek()?.state ?? super.state;
  }

  override get coolingDown(): boolean {
    return this.peek()?.coolingDown ?? false;
  }

  override get listed(): Promise<void> {
    return this.peek()?.listed ?? Promise.resolve();
  }

  override status(): ServerStatus {
    return { ...super.status(), instances: this.alive };
  }

  override run<T, R = T>(request: SlotRequest<T, R> | SlotRequest<T, R>['send'], options: CallOptions = {}, label?: RequestLabel): Promise<R> {
    const who = currentScope()?.principal;
    return this.instance().then((slot) => slot.run(request, options, label).catch(async (error: unknown) => Promise.reject(await this.failure(slot, error, who))));
  }

  override ready(): Promise<McpClient> {
    const who = currentScope()?.principal;
    return this.instance().then((slot) => slot.ready().catch(async (error: unknown) => Promise.reject(await this.failure(slot, error, who))));
  }

  /**
   * An instance's failure as its caller sees it: without the credentials, and for an OAuth
   * server's `auth-required`, naming whose authorization is missing and the URL to send
   * that principal's user to (a login kept in wait for that principal and server).
   */
  private async failure(slot: ServerSlot, error: unknown, who: Principal | undefined): Promise<unknown> {
    const out = this.redacted(slot, error);
    const principal = this.principals.get(slot);
    if (!(out instanceof McpError) || out.code !== 'auth-required' || principal === undefined || this.entry.kind !== 'http') return out;
    let url: URL | undefined;
    if (who?.id === principal && this.owner.authorizationUrl) {
      // Without a URL (discovery failed, a machine client) the caller is still told how to log in.
      url = await Promise.resolve()
        .then(() => this.owner.authorizationUrl!(this.loginConfig(who), principal))
        .catch(() => undefined);
    }
    const how = url ? `send the user to ${url.href}` : `manager.login(${JSON.stringify(this.name)}, { principal: { id: ${JSON.stringify(principal)} } })`;
    return new McpError('auth-required', `${out.message} (principal ${JSON.stringify(principal)}: ${how})`, {
      server: this.name,
      ...(out.phase === undefined ? {} : { phase: out.phase }),
      ...(out.status === undefined ? {} : { status: out.status }),
      ...(url ? { authorizationUrl: url.href } : {}),
      cause: out,
    });
  }

  private redacted(slot: ServerSlot, error: unknown): unknown {
    const redact = this.redactors.get(slot);
    return redact ? redactError(error, redact) : error;
  }

  /** The instance of the work in flight, or every alive one for the manager's own restart. */
  override async restart(): Promise<void> {
    if (super.state === 'closed') throw closedError(this.name);
    const own = this.peek();
    if (own) {
      const who = currentScope()?.principal;
      return own.restart().catch(async (error: unknown) => Promise.reject(await this.failure(own, error, who)));
    }
    await Promise.all([...this.instances.values()].filter((s) => ALIVE.has(s.state)).map((s) => s.restart()));
  }

  override authorized(): void {
    for (const slot of this.instances.values()) slot.authorized();
  }

  override async stop(to: 'stopped' | 'closed', graceMs?: number): Promise<void> {
    if (to === 'closed') return this.shutdown(graceMs);
    await Promise.all([...this.instances.values()].map((slot) => slot.stop('stopped', graceMs)));
  }

  override async drain(graceMs?: number): Promise<void> {
    const all = [...this.instances.values()];
    this.instances.clear();
    await Promise.all([...all.map((slot) => slot.drain(graceMs)), super.drain(graceMs)]);
  }

  override shutdown(graceMs?: number): Promise<void> {
    const all = [...this.instances.values()];
    this.instances.clear();
    return Promise.all([super.shutdown(graceMs), ...all.map((slot) => slot.shutdown(graceMs))]).then(() => undefined);
  }

  /** The instance for the work in flight, made (and started by its first request) if it has none. */
  private instance(): Promise<ServerSlot> {
    const scope = currentScope();
    return credentialsFor(this.name, this.spec, scope, this.owner.credentials).then((values) => this.instanceFor(scope, values));
  }

  private instanceFor(scope: PrincipalScope | undefined, values: Record<string, string>): ServerSlot {
    if (super.state === 'closed') throw closedError(this.name);
    const key = keyOf(this.spec, scope, values);
    const known = this.instances.get(key);
    if (known && known.state !== 'closed') {
      // Most recently used last.
      this.instances.delete(key);
      this.instances.set(key, known);
      return known;
    }
    this.prune();
    this.evict(this.spec.maxInstances - 1);
    const redact = redactorOf(values);
    const principal = this.spec.mode === 'per-principal' ? scope?.principal?.id : undefined;
    const slot = this.owner.make(instanceEntry(this.entry as ServerEntry & { config: ResolvedServer | ResolvedRemoteServer }, this.spec, values), redact, principal, values);
    this.principals.set(slot, principal);
    this.redactors.set(slot, redact);
    this.instances.set(key, slot);
    return slot;
  }

  /**
   * The entry `principal` logs in with: the server's, its URL filled with the principal's
   * credentials when it has placeholders (`auth-required` naming a missing one).
   */
  loginConfig(principal: Principal): ResolvedRemoteServer {
    const config = this.entry.kind === 'http' ? this.entry.config : undefined;
    if (!config) throw new McpError('invalid-arguments', `${serverLabel(this.name)}login needs an HTTP server with "oauth" in its config entry`, { server: this.name, phase: 'auth' });
    if (this.spec.url === undefined) return config;
    const missing = this.spec.names.filter((name) => typeof principal.credentials?.[name] !== 'string');
    if (missing.length > 0) {
      throw new McpError('auth-required', `${serverLabel(this.name)}its URL needs principal ${JSON.stringify(principal.id)}'s credential ${missing.join(', ')} to log in`, { server: this.name, phase: 'auth' });
    }
    return (instanceEntry(this.entry as ServerEntry & { config: ResolvedRemoteServer }, this.spec, principal.credentials ?? {}) as { config: ResolvedRemoteServer }).config;
  }

  /** Whom the work in flight is for, as a digest ('' for nobody): the context a listing the server marks private is kept under. */
  context(): string {
    const who = whoOf(this.spec, currentScope());
    return who === undefined ? '' : sha256(who, 'base64url').slice(0, 22);
  }

  /** The instance of the work in flight, if it has one already (nothing is resolved or made). */
  private peek(): ServerSlot | undefined {
    const scope = currentScope();
    const who = whoOf(this.spec, scope);
    if (who === undefined) return undefined;
    // Credentials are part of the key; the latest instance of this principal or session is the one in use.
    let found: ServerSlot | undefined;
    for (const [key, slot] of this.instances) if (key.startsWith(`${who}\0`)) found = slot;
    return found;
  }

  /** Forgets instances that stopped (idle, crashed) and hold no process: the next use makes a fresh one. */
  private prune(): void {
    for (const [key, slot] of this.instances) {
      if (slot.state === 'stopped' || slot.state === 'closed') {
        this.instances.delete(key);
        void slot.shutdown();
      }
    }
  }

  /** Takes the least recently used instances out until at most `keep` are alive; each stops once its calls are over. */
  private evict(keep: number): void {
    let alive = this.alive;
    for (const [key, slot] of this.instances) {
      if (alive <= keep) break;
      if (!ALIVE.has(slot.state)) continue;
      this.instances.delete(key);
      alive--;
      void slot.drain(this.owner.graceMs);
    }
    // Instances that never ran (backoff, needs-auth) are bounded too.
    for (const [key, slot] of this.instances) {
      if (this.instances.size < this.spec.maxInstances * 4) break;
      this.instances.delete(key);
      void slot.shutdown();
    }
  }
}

/** Who an instance is for, as its key begins; undefined when the work in flight names nobody an instance could be for. */
function whoOf(spec: InstanceSpec, scope: PrincipalScope | undefined): string | undefined {
  if (spec.mode === 'per-session') return `s:${scope?.session ?? 'manager'}`;
  return scope?.principal ? `p:${scope.principal.id}` : undefined;
}

/** Keyed by the credentials too (as a digest): a principal whose token changed gets a fresh instance. */
function keyOf(spec: InstanceSpec, scope: PrincipalScope | undefined, values: Record<string, string>): string {
  const digest = sha256(JSON.stringify(spec.names.map((n) => values[n] ?? '')), 'base64url').slice(0, 22);
  return `${whoOf(spec, scope)}\0${digest}`;
}

/** The entry of one instance: the template with its placeholders filled. */
function instanceEntry(entry: ServerEntry & { config: ResolvedServer | ResolvedRemoteServer }, spec: InstanceSpec, values: Record<string, string>): ServerEntry {
  const fill = (text: string) => fillPlaceholders(text, (name) => values[name] ?? '');
  if (entry.kind === 'stdio') return { ...entry, config: fillStdioConfig(entry.config as ResolvedServer, values) };
  const config = entry.config as ResolvedRemoteServer;
  const url = spec.url === undefined ? config.url : new URL(fillPlaceholders(spec.url, (name) => encodeURIComponent(values[name] ?? ''))).href;
  return {
    ...entry,
    kind: 'http',
    config: { ...config, url, headers: Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k, fill(v)])) },
  } as ServerEntry;
}

function closedError(server: string): McpError {
  return new McpError('closed', `${serverLabel(server)}the manager was shut down`, { server });
}
