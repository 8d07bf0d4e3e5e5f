import type { McpClient } from '../../protocol/client.js';
import type { HealthMonitor } from './health.js';
import type { ServerState } from './slot-state.js';

/**
 * The slot's state as data. Every state has the same two fields, so the call path reads
 * `state.client` off one shape; the client is there in `ready` and nowhere else, which the
 * types hold: code that has a client from the slot has it from a `ready` state.
 */
export type SlotState = Ready | Starting | Backoff | Plain;

/** Running: the connection, and the probes watching it while it is the slot's. */
export interface Ready {
  readonly name: 'ready';
  readonly client: McpClient;
  readonly health: HealthMonitor | undefined;
}

/** A start in flight. `silent`: the server has written nothing to stderr since its handshake began (a time-out then may be a package runner downloading). */
export interface Starting {
  readonly name: 'starting';
  readonly client: undefined;
  silent: boolean;
}

/** A failed start; calls fail fast until `retryAt` (`performance.now()` time). */
export interface Backoff {
  readonly name: 'backoff';
  readonly client: undefined;
  readonly retryAt: number;
}

interface Plain {
  readonly name: Exclude<ServerState, 'ready' | 'starting' | 'backoff'>;
  readonly client: undefined;
}

/**
 * Every move a slot may make, and no other (see {@link ServerState} for what each state
 * means). There is no `stopping`: a slot leaves `ready` the moment it takes the
 * connection to close it (the stop is then its operation in flight), so no call is ever
 * sent on a connection being closed. `closed` is final.
 */
export const TRANSITIONS: { readonly [From in ServerState]: readonly ServerState[] } = {
  idle: ['starting', 'closed'],
  starting: ['ready', 'backoff', 'failed', 'needs-auth', 'closed'],
  // stopped: crashed, stopped for being idle, or the stop half of a restart.
  ready: ['stopped', 'needs-auth', 'closed'],
  stopped: ['starting', 'closed'],
  backoff: ['starting', 'closed'],
  // Only restart() starts a failed server again.
  failed: ['starting', 'closed'],
  // stopped: authorized (a login); starting: restart().
  'needs-auth': ['stopped', 'starting', 'closed'],
  invalid: ['closed'],
  unsupported: ['closed'],
  disabled: ['closed'],
  closed: [],
};

const plain = new Map<Plain['name'], Plain>();

/** The one (frozen) object of a state that carries nothing. */
export function plainState(name: Plain['name']): Plain {
  let state = plain.get(name);
  if (!state) plain.set(name, (state = Object.freeze({ name, client: undefined })));
  return state;
}

/** Throws when the table has no move from `from` to `to`: a bug in the slot, never a user's error. */
export function checkTransition(server: string, from: ServerState, to: ServerState): void {
  if (!TRANSITIONS[from].includes(to)) throw internalError(`server "${server}": no transition from ${from} to ${to}`);
}

/** A broken invariant of the slot: a plain Error, not an `McpError` (whose codes are for users). */
export function internalError(message: string): Error {
  const error = new Error(`internal error: ${message}`);
  error.name = 'InternalError';
  return error;
}
