import type { ConnectOptions, McpClient } from '../../protocol/client.js';
import type { RequestFinish } from '../../protocol/engine/pending-requests.js';
import type { CallOptions, HostHandlers, Tool } from '../../protocol/types.js';
import type { OAuthProvider } from '../../transport/http/oauth/provider-types.js';
import type { MetricsRecorder } from '../telemetry/metrics.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { ChannelFactory } from './channel-factory.js';
import type { ServerState } from './slot-state.js';

/** What a slot needs from its manager: shared options and where to report. */
export interface SlotHost {
  connectOptions(server: string): ConnectOptions;
  stateChanged(server: string, from: ServerState, to: ServerState): void;
  /** A start listed these tools from the live server. */
  toolsListed(server: string, client: McpClient, tools: Tool[]): Promise<void>;
  /**
   * Whether the tools known of this server (an earlier connection's, or the cache's, for
   * the same server version and era) may stand until the live listing lands: the start is
   * then ready after the handshake, and lists beside the calls that woke it.
   */
  knowsTools(server: string, client: McpClient): boolean;
  /** The live listing of a start that was ready on known tools failed; they stay. */
  relistFailed(server: string, error: unknown): void;
  /** A start's connection is ready: what was made on the last one (subscriptions) is made again. */
  connected(server: string, client: McpClient): void;
  /** Where the server's calls and starts are counted; it outlives the slot across reloads. */
  readonly metrics: MetricsRecorder;
  /** Spans for starts and requests, when `@opentelemetry/api` is installed. */
  readonly tracing?: Tracing;
  /** The slot this one replaced in a reload: no start begins before it has shut down, so two processes of a server never overlap. */
  readonly predecessor?: Promise<void>;
  /** The OAuth provider of a remote server with `oauth`; undefined for the others. */
  auth?(server: string): OAuthProvider | undefined;
  /** The time backoff waits are measured in, in ms (a test's clock). Default: `performance.now()`. */
  readonly clock?: () => number;
  /** Opens the channel of each start: where the server runs, as the manager's placement decided for this entry. */
  readonly channels: ChannelFactory;
}

/**
 * One request as a slot runs it: how it is sent on a ready client, and what its caller
 * gets from the outcome once the slot has counted it. `waited`: the request waited for
 * a start (which may have listed the server's tools again).
 */
export interface SlotRequest<T, R = T> {
  /**
   * `finish`: given when {@link handsOn} is set, for the request to hand to the client
   * (`RequestOptions.finish`); the promise `send` returns is then the caller's.
   */
  send(client: McpClient, touch: () => void, options: CallOptions, waited: boolean, finish?: RequestFinish): Promise<T>;
  /** `send` hands the slot's `finish` on: the slot adds no promise layer of its own. */
  readonly handsOn?: boolean;
  /** Who makes the request: a question the server asks while the request waits for its start may be for them. */
  readonly caller?: object;
  readonly handlers?: HostHandlers;
  readonly toolCall?: { name: string; arguments: object };
  /** Checks an answer before it counts as a success; a throw fails the request. */
  check?(result: T): void;
  /** The caller's result from the server's. Default: as it came. */
  done?(result: T): R | Promise<R>;
  /** The caller's outcome from a failure. Default: the error. */
  failed?(error: unknown): R | Promise<R>;
}

export type Send<T> = SlotRequest<T>['send'];

/** What a request is, for its span: the method and the tool (or other target) it names. */
export interface RequestLabel {
  method: string;
  target?: string;
  resourceUri?: string;
}
