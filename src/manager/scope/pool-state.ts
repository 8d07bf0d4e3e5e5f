import { McpError } from '../../errors.js';
import { shown } from '../../util/check.js';
import type { ToolSearchIndex } from '../../model/tool-search.js';
import type { ToolCatalog } from '../catalog/tool-catalog.js';
import type { ManagedTool } from '../catalog/tool-index.js';
import type { ToolCallHost } from '../call/tool-call.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { HostRouter } from './host-handlers.js';
import type { Subscriptions } from './subscriptions.js';

/** The servers a scope may use; undefined means all of the pool's. */
export type View = ReadonlySet<string> | undefined;

/** What every scope works on: the pool's live state, owned by the manager. */
export interface PoolState {
  /** The configured servers by name; a reload replaces entries. */
  readonly slots: ReadonlyMap<string, ServerSlot>;
  readonly catalog: ToolCatalog;
  readonly search: ToolSearchIndex<ManagedTool>;
  readonly router: HostRouter;
  readonly subscriptions: Subscriptions;
  readonly toolCalls: ToolCallHost;
  readonly maxResultBytes: number | undefined;
  /** Undefined without an OpenTelemetry API in reach, and looked up on first use. */
  readonly tracing: Tracing | undefined;
  /** Set once the manager shuts down. */
  readonly closed: boolean;
  /** Tells the host something it asked for did not happen as asked (a `log` event). */
  note(server: string, message: string): void;
}

export function closedError(): McpError {
  return new McpError('closed', 'the manager was shut down', {});
}

export function assertOpen(pool: PoolState): void {
  if (pool.closed) throw closedError();
}

/** The slot of a configured server the view includes, or `unknown-server` naming the ones it may use. */
export function slotOf(pool: PoolState, server: string, view?: View): ServerSlot {
  const slot = pool.slots.get(server);
  if (slot && view && !view.has(server)) {
    throw new McpError('unknown-server', `server ${JSON.stringify(server)} is not available in this session (its servers: ${[...view].join(', ') || 'none'})`, { server });
  }
  if (!slot) {
    const known = [...pool.slots.keys()].filter((s) => !view || view.has(s));
    throw new McpError('unknown-server', `no server named ${JSON.stringify(server)}${known.length ? `; configured: ${known.join(', ')}` : ''}`, { server });
  }
  return slot;
}

/** Checks server names against the pool and the view, and returns them as a set; undefined means the whole view. */
export function narrow(pool: PoolState, view: View, servers: readonly string[] | undefined): View {
  if (servers === undefined) return view;
  if (!Array.isArray(servers)) throw new McpError('invalid-arguments', `servers must be an array of server names, got ${shown(servers)}`, {});
  for (const server of servers) slotOf(pool, server, view);
  return new Set(servers);
}

export function enabledSlots(pool: PoolState, view: View): ServerSlot[] {
  return [...pool.slots.values()].filter((slot) => slot.enabled && (!view || view.has(slot.name)));
}

/** Enabled servers of a view that may start now (not cooling down after a failed start). */
export function usableSlots(pool: PoolState, view: View): ServerSlot[] {
  return enabledSlots(pool, view).filter((slot) => !slot.coolingDown);
}

/** Runs `work` for each slot in parallel; a failing server is left out unless the manager was shut down. */
export async function eachSlot<T>(pool: PoolState, slots: ServerSlot[], work: (slot: ServerSlot) => Promise<T>): Promise<T[]> {
  const settled = await Promise.allSettled(slots.map(work));
  const out: T[] = [];
  for (const result of settled) {
    if (result.status === 'fulfilled') out.push(result.value);
    else if (pool.closed) throw result.reason;
  }
  return out;
}
