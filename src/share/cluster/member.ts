import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpError, serverLabel } from '../../errors.js';
import type { ResolvedServer } from '../../manager/config/config.js';
import type { ConnectOptions } from '../../protocol/client.js';
import type { Channel } from '../../transport/channel.js';
import { INVALID_PARAMS, SESSION_NOT_FOUND } from '../../transport/mcp-constants.js';
import { sharedSpec } from '../daemon/open-shared.js';
import { fillStdioConfig } from '../../manager/principals/entry-fields.js';
import { CREDENTIALS_HEADER, type InstanceRef, openInstance, sealInstance } from './instance-ref.js';
import type { AttachParams } from '../daemon/wire.js';
import { clusterFingerprint } from './fingerprint.js';
import { forwardRequest } from './forward.js';
import { type Member, Membership } from './membership.js';
import { type ResolvedCluster, shownRedis } from './options.js';
import { bearerIs, INTERNAL_PREFIX, OwnerHost } from './owner-host.js';
import { openRedis, type RedisClient } from './redis-link.js';
import { RedisManifestStore, RedisTokenStore } from './redis-store.js';
import { ownerOf, placementKey } from './rendezvous.js';
import { PlacedChannel } from './relay-channels.js';
import { looksSealed, seal, unseal } from './sealed.js';

/** What the manager tells its member. */
export interface MemberHooks {
  /** The stdio servers of this member's config, with the options it connects them with. */
  servers(): Iterable<{ name: string; config: ResolvedServer; options: ConnectOptions }>;
  /** Another member saw a server's list change, or applied a config: this member follows. */
  remote(event: ClusterEvent): void;
  log(message: string): void;
}

/** What members tell each other through Redis pub/sub. */
export type ClusterEvent =
  | { type: 'join' | 'leave'; id: string }
  | { type: 'tools' | 'prompts' | 'resources'; server: string; from: string }
  | { type: 'reload'; config: unknown; from: string };

/** A legacy session id lives this long at most, in ms (the session itself ends sooner when idle). */
const SESSION_TTL_MS = 7 * 24 * 3600_000;
/** A placement that found a peer not owning (views differ for a refresh) tries again this often. */
const PLACE_ATTEMPTS = 12;
const PLACE_PAUSE_MS = 200;
const PROBE_TIMEOUT_MS = 1500;

/**
 * This process as a member of a cluster: its membership (heartbeat), the servers it owns
 * ({@link OwnerHost}), the placement of every stdio server by rendezvous hashing, the
 * shared stores, the sealed routing of sessions and rounds, and the events every member hears.
 */
export class ClusterMember {
  readonly manifests: RedisManifestStore;
  readonly tokens: RedisTokenStore;
  private readonly host: OwnerHost;
  private listener: Server | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly options: ResolvedCluster,
    private readonly redis: RedisClient,
    private readonly subscriber: RedisClient,
    readonly membership: Membership,
    private readonly hooks: MemberHooks,
  ) {
    this.manifests = new RedisManifestStore(redis, options.prefix, (_server, message, error) => hooks.log(error ? `${message}: ${(error as Error).message}` : message));
    this.tokens = new RedisTokenStore(redis, options.prefix, options.keys.store);
    this.host = new OwnerHost(options.keys.auth, {
      attachParams: (fp, instance) => this.attachParams(fp, instance),
      openInstance: (sealed) => openInstance(options.keys.seal, sealed),
      owns: (fp, principal) => this.owns(fp, principal),
      log: (line) => hooks.log(line),
    });
    membership.on('change', () => this.host.rebalance());
  }

  /** Connects to Redis, serves the internal endpoint (unless a gateway does), and joins. */
  static async start(options: ResolvedCluster, hooks: MemberHooks): Promise<ClusterMember> {
    const problem = (message: string) => hooks.log(message);
    const [redis, subscriber] = await Promise.all([openRedis(options.redis, 'member', problem), openRedis(options.redis, 'events', problem)]);
    const channel = `${options.prefix}events`;
    const membership = new Membership(redis, options.prefix, options.advertise, async (type, id) => {
      await redis.publish(channel, JSON.stringify({ type, id }));
    });
    const member = new ClusterMember(options, redis, subscriber, membership, hooks);
    subscriber.on('message', (_channel: string, text: string) => member.heard(text));
    await subscriber.subscribe(channel).catch(() => undefined);
    if (options.listen) await member.listen();
    await membership.start();
    return member;
  }

  get id(): string {
    return this.membership.self.id;
  }

  /** Tells every other member. Never throws (Redis may be away: the event is lost, the next refresh heals). */
  publish(event: ClusterEvent): void {
    this.redis.publish(`${this.options.prefix}events`, JSON.stringify(event)).catch(() => undefined);
  }

  private heard(text: string): void {
    let event: ClusterEvent;
    try {
      event = JSON.parse(text) as ClusterEvent;
    } catch {
      return;
    }
    if (!('from' in event)) {
      if (event.id !== this.id) void this.membership.refresh();
      return;
    }
    if (event.from === this.id) return;
    this.hooks.remote(event);
  }

  /**
   * A stdio server's channel, wherever the cluster places it: this member's own process of
   * it when this member owns it, else MCP over HTTP to its owner. Refuses with
   * `unavailable` when the view of the cluster cannot be trusted (Redis away). With
   * `instance` (a server run per principal, `config` its template): placed by the
   * principal too, and started with the principal's credentials, which travel to the
   * owner sealed with the cluster secret.
   */
  async open(name: string, config: ResolvedServer, options: ConnectOptions, signal: AbortSignal, instance?: InstanceRef): Promise<Channel> {
    const fingerprint = clusterFingerprint(config, options);
    const principal = instance?.principal ?? '';
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw new McpError('closed', `${serverLabel(name)}the manager was shut down`, { server: name });
      const owner = this.ownerOf(name, fingerprint, principal);
      if (owner.id === this.id) {
        const params = this.attachParams(fingerprint, instance, { name, config, options });
        return new PlacedChannel(await this.host.attachLocal(fingerprint, params!, instance), name, 'this member', () => undefined);
      }
      const verdict = await this.probe(owner, fingerprint, principal);
      if (verdict === 'owns') {
        const { createHttpChannel } = await import('../../transport/http/create-http-channel.js');
        const url = `${owner.url}${INTERNAL_PREFIX}s/${fingerprint}`;
        const headers: Record<string, string> = { authorization: `Bearer ${this.options.keys.auth}`, 'x-lazy-mcp-principal': encodeURIComponent(principal) };
        if (instance) headers[CREDENTIALS_HEADER] = sealInstance(this.options.keys.seal, instance);
        const channel = await createHttpChannel(
          { transport: 'http', url, shownUrl: url, headers },
          { name, signal, ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }) },
        );
        return new PlacedChannel(channel, name, owner.url, (reason) => {
          if (reason.code === 'connect-failed') void this.membership.evict(owner.id);
        });
      }
      // Unreachable: it leaves every view now (back at its next beat if it lives). Not owning: our views differ for a refresh.
      if (verdict === 'unreachable') await this.membership.evict(owner.id);
      else await this.membership.refresh();
      if (attempt >= PLACE_ATTEMPTS) {
        throw new McpError('unavailable', `${serverLabel(name)}cannot place the server: member ${owner.url} ${verdict === 'unreachable' ? 'cannot be reached' : 'does not agree it owns it'} after ${attempt} tries`, { server: name });
      }
      await new Promise((resolve) => setTimeout(resolve, PLACE_PAUSE_MS));
    }
  }

  private ownerOf(name: string, fingerprint: string, principal: string): Member {
    if (!this.membership.healthy) {
      const why = (this.membership.problem as Error | undefined)?.message ?? 'no answer yet';
      throw new McpError(
        'unavailable',
        `${serverLabel(name)}cannot place the server: the cluster's Redis at ${shownRedis(this.options.redis)} is unreachable (${why}); servers this member runs keep serving, and placing works again once Redis answers`,
        { server: name },
      );
    }
    const members = this.membership.members();
    const id = ownerOf(placementKey(fingerprint, principal), members.map((m) => m.id))!;
    return members.find((m) => m.id === id)!;
  }

  private owns(fingerprint: string, principal = ''): boolean {
    if (!this.membership.healthy) return false;
    return ownerOf(placementKey(fingerprint, principal), this.membership.members().map((m) => m.id)) === this.id;
  }

  /** Asks a peer whether it owns the fingerprint in its view (and whether it answers at all). */
  private async probe(owner: Member, fingerprint: string, principal: string): Promise<'owns' | 'not-owner' | 'unreachable'> {
    try {
      const response = await fetch(`${owner.url}${INTERNAL_PREFIX}owns/${fingerprint}?p=${encodeURIComponent(principal)}`, {
        headers: { authorization: `Bearer ${this.options.keys.auth}` },
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      const body = (await response.json().catch(() => ({}))) as { owns?: boolean };
      if (!response.ok) return 'unreachable';
      return body.owns ? 'owns' : 'not-owner';
    } catch {
      return 'unreachable';
    }
  }

  /**
   * How this member runs the server of `fingerprint` (its own config's entry of that
   * fingerprint, or `known`); for an instance, the entry filled with its credentials.
   * Undefined when there is no such entry, or when an instance and the entry disagree on
   * whether it runs per principal.
   */
  private attachParams(fingerprint: string, instance?: InstanceRef, known?: { name: string; config: ResolvedServer; options: ConnectOptions }): AttachParams | undefined {
    let found = known;
    if (!found) for (const server of this.hooks.servers()) if (clusterFingerprint(server.config, server.options) === fingerprint) found = server;
    if (!found) return undefined;
    const perPrincipal = found.config.instances?.mode === 'per-principal';
    if (perPrincipal !== (instance !== undefined)) return undefined;
    const { name, options } = found;
    const config = instance ? fillStdioConfig(found.config, instance.values) : found.config;
    const timeout = config.timeout ?? options.timeout;
    return {
      // Attached in this process: no socket hello, so no version or daemon secret to prove.
      wire: 0,
      version: '',
      secret: '',
      pid: process.pid,
      name,
      spec: sharedSpec(config, options),
      ...(timeout === undefined ? {} : { timeout }),
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
    };
  }

  /**
   * Serves what is for members ({@link INTERNAL_PREFIX}): the per-server endpoints and the
   * ownership probe. False when the request is not for it.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = (req.url ?? '').split('?')[0];
    const owns = /^\/\.lazy-mcp\/cluster\/owns\/([0-9a-f]{16,64})$/.exec(path);
    if (owns) {
      if (!bearerIs(req.headers.authorization, this.options.keys.auth)) return (res.writeHead(401).end(), true);
      const principal = decodeURIComponent(new URL(req.url ?? '', 'http://x').searchParams.get('p') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ owns: this.owns(owns[1], principal) }));
      return true;
    }
    if (path === `${INTERNAL_PREFIX}health`) {
      if (!bearerIs(req.headers.authorization, this.options.keys.auth)) return (res.writeHead(401).end(), true);
      // What this member sees: whether it can place, and whom.
      const body = { id: this.id, healthy: this.membership.healthy, members: this.membership.members().map((m) => m.url), running: this.host.running() };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return true;
    }
    return this.host.handle(req, res);
  }

  /** A new legacy session id: routes any request of the session back to this member. */
  newSessionId(): string {
    return seal(this.options.keys.seal, 'session', { m: this.id }, SESSION_TTL_MS);
  }

  /** A new round state (2026 `requestState`) of this member's, alive `ttlMs`. */
  newRoundState(ttlMs: number): string {
    return seal(this.options.keys.seal, 'round', { m: this.id, n: Math.random().toString(36).slice(2) }, ttlMs);
  }

  /**
   * A session id or round state this member does not hold: forwarded to the member that
   * issued it, or refused clearly (forged, expired, its member gone). False: this member
   * issued it (the caller answers as for any unknown one).
   */
  async elsewhere(kind: 'session' | 'round', value: string, req: IncomingMessage, res: ServerResponse, body?: string): Promise<boolean> {
    const refuse = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: kind === 'session' ? SESSION_NOT_FOUND : INVALID_PARAMS, message } }));
      return true;
    };
    const what = kind === 'session' ? 'Mcp-Session-Id' : 'requestState';
    if (!looksSealed(value)) return kind === 'session' ? refuse(404, `Session not found: this ${what} was not issued by this cluster`) : false;
    const opened = unseal<{ m: string }>(this.options.keys.seal, kind, value);
    if (!opened.ok) {
      return refuse(kind === 'session' ? 404 : 400, opened.why === 'expired' ? `the ${what} has expired; start again` : `the ${what} was not issued by this cluster (it fails authentication): refused`);
    }
    const id = opened.value.m;
    if (id === this.id) return false;
    if (req.headers['x-lazy-mcp-forwarded'] !== undefined) return refuse(508, `the ${what} was forwarded here but is held by another member: refusing to forward twice`);
    const member = this.membership.member(id);
    if (!member) return refuse(404, `Session not found: the cluster member that held this ${what} is gone; start again`);
    await forwardRequest(member, req, res, body, () => void this.membership.evict(member.id));
    return true;
  }

  private async listen(): Promise<void> {
    const url = new URL(this.options.advertise);
    const server = createServer((req, res) => {
      this.handle(req, res)
        .then((handled) => {
          if (!handled) res.writeHead(404).end();
        })
        .catch(() => res.headersSent || res.writeHead(500).end());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new McpError('connect-failed', `cannot serve the cluster endpoint on ${this.options.advertise}: ${error.message}`, { cause: error })));
      server.listen(Number(url.port || (url.protocol === 'https:' ? 443 : 80)), url.hostname.replace(/^\[|\]$/g, ''), () => resolve());
    });
    this.listener = server;
    void (server.address() as AddressInfo);
  }

  /** Leaves the cluster (peers re-place at once), stops the servers this member owns, closes Redis. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.membership.close();
      await this.host.close();
      await this.manifests.flushed(500);
      if (this.listener) {
        const listener = this.listener;
        await new Promise<void>((resolve) => listener.close(() => resolve()));
        listener.closeAllConnections();
      }
      this.subscriber.disconnect();
      this.redis.disconnect();
    })();
    return this.closing;
  }
}
