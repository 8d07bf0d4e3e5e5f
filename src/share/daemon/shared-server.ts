import { readFileSync } from 'node:fs';
import { McpError } from '../../errors.js';
import { describeClient, type ServerDescription } from '../../manager/catalog/server-description.js';
import { McpClient } from '../../protocol/client.js';
import { openChannel } from '../../protocol/connect.js';
import type { CallOptions, LogMessage, Prompt, Tool } from '../../protocol/types.js';
import { CallRelay } from './call-relay.js';
import type { DaemonManifests, KnownServer } from './manifests.js';
import type { AttachParams } from './wire.js';

/** What a shared server needs of each session attached to it. */
export interface AttachedSession {
  /** Tells the session's client a notification of the server's (list changes, logs). */
  notify(method: string, params?: Record<string, unknown>): void;
  /** Whether the session subscribed to `uri`. */
  subscribed(uri: string): boolean;
  stderr(line: string): void;
  /** The server process started (the session may have been served from the manifest cache until now). */
  started(pid: number): void;
  /** The server is gone: the session ends with `reason`. */
  end(reason: McpError): void;
}

/** `idle`: no process (a session is served from the manifest cache until it needs one). */
export type SharedState = 'idle' | 'starting' | 'ready' | 'closed';

/**
 * One server process of the daemon, shared by every session whose entry has its
 * fingerprint: started once (single flight), its notifications told to every session,
 * its resource subscriptions counted across sessions. With no session left it lingers for
 * `lingerMs`, then stops; when it exits, every session attached to it ends.
 *
 * A fingerprint the daemon's manifest cache knows is not started for a session's
 * handshake or listings: they are answered from the cache until a request needs the
 * process. Once started, its listings are made again, and a change is told to every
 * session (`list_changed`), so a stale entry lives until the first real use at most.
 */
export class SharedServer {
  private client: McpClient | undefined;
  /** The short path for tool calls, while a legacy-era server runs (see {@link CallRelay}). */
  private callRelay: CallRelay | undefined;
  private starting: Promise<McpClient> | undefined;
  private readonly sessions = new Set<AttachedSession>();
  private readonly subscriptions = new Map<string, number>();
  private linger: NodeJS.Timeout | undefined;
  private tools: Promise<Tool[]> | undefined;
  private closing: Promise<void> | undefined;
  /** What the manifest cache holds of this fingerprint, kept in step with live listings. */
  private known: KnownServer | undefined;
  private loading: Promise<void> | undefined;
  state: SharedState = 'idle';
  readonly startedAt = new Date();

  constructor(
    readonly fingerprint: string,
    readonly params: AttachParams,
    private readonly lingerMs: number,
    private readonly onGone: (server: SharedServer) => void,
    private readonly log: (line: string) => void,
    private readonly manifests?: DaemonManifests,
  ) {}

  get name(): string {
    return this.params.name;
  }

  get pid(): number | undefined {
    const pid = this.client?.pid;
    return pid === undefined || Number.isNaN(pid) ? undefined : pid;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** The running client, if it runs: a relay takes it without waiting a turn. */
  get live(): McpClient | undefined {
    return this.client;
  }

  /** The short path for tool calls to the running server, when it has one (a legacy-era server). */
  get relay(): CallRelay | undefined {
    return this.callRelay;
  }

  /** The running client, starting the server first if it must (once, however many ask). */
  ready(): Promise<McpClient> {
    if (this.state === 'closed') return Promise.reject(new McpError('unavailable', `server "${this.name}": the shared server is stopping`, { server: this.name }));
    if (this.client) return Promise.resolve(this.client);
    this.starting ??= this.start();
    return this.starting;
  }

  /**
   * Ready to serve a new session: a running server, or one the manifest cache knows (then
   * nothing is started); else it is started now.
   */
  async attachable(): Promise<void> {
    this.loading ??= this.manifests
      ? this.manifests.load(this.fingerprint).then((known) => void (this.known ??= known))
      : Promise.resolve();
    await this.loading;
    if (this.client || (this.known && this.state !== 'closed')) return;
    await this.ready();
  }

  /** What the server says about itself: live when it runs, else from the manifest cache. */
  description(): ServerDescription {
    if (this.client) return describeClient(this.client);
    if (this.known) return this.known.description;
    throw new McpError('unavailable', `server "${this.name}": the shared server is not running`, { server: this.name });
  }

  attach(session: AttachedSession): void {
    clearTimeout(this.linger);
    this.sessions.add(session);
  }

  detach(session: AttachedSession): void {
    if (this.sessions.delete(session)) this.releaseIfUnused();
  }

  /** With no session, the server lingers (for the next client), then stops. */
  releaseIfUnused(): void {
    if (this.sessions.size > 0 || this.state === 'closed') return;
    clearTimeout(this.linger);
    this.linger = setTimeout(() => {
      if (this.sessions.size === 0) void this.close();
    }, this.lingerMs);
    this.linger.unref();
  }

  /**
   * The server's tools, listed once for every session until it says they changed: a new
   * session's listing of a running server costs the server nothing.
   */
  listTools(): Promise<Tool[]> {
    if (!this.client && this.known) return Promise.resolve(this.known.tools);
    const listing = (this.tools ??= this.ready().then(async (client) => {
      const tools = await client.listTools({ timeout: Infinity });
      this.remember(client, { tools });
      return tools;
    }));
    listing.catch(() => {
      if (this.tools === listing) this.tools = undefined;
    });
    return listing;
  }

  /** The server's prompts: from the manifest cache while it does not run (when they were listed), else live. */
  async listPrompts(options: CallOptions): Promise<Prompt[]> {
    if (!this.client && this.known?.prompts) return this.known.prompts;
    const client = await this.ready();
    const prompts = await client.listPrompts(options);
    this.remember(client, { prompts });
    return prompts;
  }

  /** Keeps a live listing in the manifest cache (written once it holds the tools). */
  private remember(client: McpClient, listed: { tools?: Tool[]; prompts?: Prompt[] }): void {
    const tools = listed.tools ?? this.known?.tools;
    const prompts = listed.prompts ?? this.known?.prompts;
    if (!tools) return;
    this.known = { description: describeClient(client), tools, ...(prompts ? { prompts } : {}) };
    this.manifests?.save(this.fingerprint, client, this.known);
  }

  /**
   * After a start, what sessions were told from the cache is checked: the listings are
   * made again and a difference is told to every session as its list_changed.
   */
  private async revalidate(client: McpClient, known: KnownServer): Promise<void> {
    const tools = await this.listTools();
    if (JSON.stringify(tools) !== JSON.stringify(known.tools)) this.each((s) => s.notify('notifications/tools/list_changed'));
    if (!known.prompts || !client.capabilities.prompts) return;
    const prompts = await client.listPrompts({ timeout: Infinity });
    this.remember(client, { prompts });
    if (JSON.stringify(prompts) !== JSON.stringify(known.prompts)) this.each((s) => s.notify('notifications/prompts/list_changed'));
  }

  /** Subscribes the server to `uri` for the first session that wants it. */
  async subscribe(uri: string): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    if (count === 0) await (await this.ready()).subscribeResource(uri);
    this.subscriptions.set(uri, (this.subscriptions.get(uri) ?? 0) + 1);
  }

  /** Unsubscribes the server once the last session that wanted `uri` no longer does. */
  async unsubscribe(uri: string): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    if (count <= 1) {
      this.subscriptions.delete(uri);
      if (count === 1 && this.client?.isOpen) await this.client.unsubscribeResource(uri);
    } else this.subscriptions.set(uri, count - 1);
  }

  /** Resident memory of the server process, where /proc tells it. */
  rssBytes(): number | undefined {
    const pid = this.pid;
    if (pid === undefined || process.platform !== 'linux') return undefined;
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops the server; every session still attached ends with `reason`. Idempotent. */
  close(reason?: McpError, graceMs?: number): Promise<void> {
    this.closing ??= (async () => {
      this.state = 'closed';
      clearTimeout(this.linger);
      this.onGone(this);
      const why = reason ?? new McpError('unavailable', `server "${this.name}": the pool daemon stopped the shared server`, { server: this.name });
      for (const session of [...this.sessions]) session.end(why);
      this.sessions.clear();
      const client = this.client ?? (await this.starting?.catch(() => undefined));
      await client?.close(graceMs);
      this.log(`stopped ${this.name} (${this.fingerprint})`);
    })();
    return this.closing;
  }

  private async start(): Promise<McpClient> {
    const { spec, name, timeout, maxMessageBytes } = this.params;
    const began = Date.now();
    this.state = 'starting';
    const known = this.known;
    let client: McpClient;
    let relay: CallRelay | undefined;
    try {
      // The channel is opened here, not by McpClient.connect: the relay writes to it too.
      const channel = await openChannel({ command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, framing: spec.framing }, { name, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) });
      relay = new CallRelay(channel);
      const calls = relay;
      client = await McpClient.over(
        channel,
        {
          name,
          ...(timeout === undefined ? {} : { timeout }),
          // A question of the server's that no request claims counts the relayed calls' callers too.
          waiting: () => calls.scopes(),
          clientInfo: spec.clientInfo,
          ...(known ? { era: known.description.era } : {}),
          ...(spec.roots ? { roots: spec.roots } : {}),
          capabilities: spec.capabilities,
          ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
          listeners: {
            stderr: (line) => this.each((s) => s.stderr(line)),
            log: ({ level, logger, data }: LogMessage) => this.each((s) => s.notify('notifications/message', { level, ...(logger === undefined ? {} : { logger }), data })),
            toolsChanged: () => {
              this.tools = undefined;
              this.each((s) => s.notify('notifications/tools/list_changed'));
            },
            promptsChanged: () => this.each((s) => s.notify('notifications/prompts/list_changed')),
            resourcesChanged: () => this.each((s) => s.notify('notifications/resources/list_changed')),
            resourceUpdated: (uri) => this.each((s) => s.subscribed(uri) && s.notify('notifications/resources/updated', { uri })),
          },
        },
      );
    } catch (error) {
      this.log(`could not start ${name} (${this.fingerprint}): ${(error as Error).message}`);
      this.starting = undefined;
      void this.close(error instanceof McpError ? error : undefined);
      throw error;
    }
    if ((this.state as SharedState) === 'closed') {
      await client.close();
      throw new McpError('unavailable', `server "${name}": the pool daemon is stopping`, { server: name });
    }
    this.client = client;
    // A 2026 server's calls take the client's path: their envelopes and rounds are its work.
    if (client.era === 'legacy') this.callRelay = relay;
    this.state = 'ready';
    this.log(`started ${name} (${this.fingerprint}) pid ${client.pid} in ${Date.now() - began} ms`);
    this.each((s) => s.started(client.pid));
    if (known) void this.revalidate(client, known).catch((error: unknown) => this.log(`listing ${name} (${this.fingerprint}) again after its start failed: ${(error as Error).message}`));
    client.once('close', (reason: McpError) => {
      if (this.state === 'closed') return;
      this.log(`${name} (${this.fingerprint}) ended: ${reason.message}`);
      void this.close(reason);
    });
    return client;
  }

  private each(work: (session: AttachedSession) => unknown): void {
    for (const session of this.sessions) {
      try {
        work(session);
      } catch {
        // One session's broken socket must not keep the others from hearing.
      }
    }
  }
}
