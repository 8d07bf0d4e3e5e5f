import { readFileSync } from 'node:fs';
import { McpError } from '../../errors.js';
import { McpClient } from '../../protocol/client.js';
import type { LogMessage, Tool } from '../../protocol/types.js';
import type { AttachParams } from './wire.js';

/** What a shared server needs of each session attached to it. */
export interface AttachedSession {
  /** Tells the session's client a notification of the server's (list changes, logs). */
  notify(method: string, params?: Record<string, unknown>): void;
  /** Whether the session subscribed to `uri`. */
  subscribed(uri: string): boolean;
  stderr(line: string): void;
  /** The server is gone: the session ends with `reason`. */
  end(reason: McpError): void;
}

export type SharedState = 'starting' | 'ready' | 'closed';

/**
 * One server process of the daemon, shared by every session whose entry has its
 * fingerprint: started once (single flight), its notifications told to every session,
 * its resource subscriptions counted across sessions. With no session left it lingers for
 * `lingerMs`, then stops; when it exits, every session attached to it ends.
 */
export class SharedServer {
  private client: McpClient | undefined;
  private starting: Promise<McpClient> | undefined;
  private readonly sessions = new Set<AttachedSession>();
  private readonly subscriptions = new Map<string, number>();
  private linger: NodeJS.Timeout | undefined;
  private tools: Promise<Tool[]> | undefined;
  private closing: Promise<void> | undefined;
  state: SharedState = 'starting';
  readonly startedAt = new Date();

  constructor(
    readonly fingerprint: string,
    readonly params: AttachParams,
    private readonly lingerMs: number,
    private readonly onGone: (server: SharedServer) => void,
    private readonly log: (line: string) => void,
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

  /** The running client, starting the server first if it must (once, however many ask). */
  ready(): Promise<McpClient> {
    if (this.state === 'closed') return Promise.reject(new McpError('unavailable', `server "${this.name}": the shared server is stopping`, { server: this.name }));
    if (this.client) return Promise.resolve(this.client);
    this.starting ??= this.start();
    return this.starting;
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
  listTools(client: McpClient): Promise<Tool[]> {
    const listing = (this.tools ??= client.listTools({ timeout: Infinity }));
    listing.catch(() => {
      if (this.tools === listing) this.tools = undefined;
    });
    return listing;
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
    let client: McpClient;
    try {
      client = await McpClient.connect(
        { command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, framing: spec.framing, ...(timeout === undefined ? {} : { timeout }) },
        {
          name,
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
    if (this.state === 'closed') {
      await client.close();
      throw new McpError('unavailable', `server "${name}": the pool daemon is stopping`, { server: name });
    }
    this.client = client;
    this.state = 'ready';
    this.log(`started ${name} (${this.fingerprint}) pid ${client.pid} in ${Date.now() - began} ms`);
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
