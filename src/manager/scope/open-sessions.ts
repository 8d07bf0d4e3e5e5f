import { McpError } from '../../errors.js';
import type { HostHandlers } from '../../protocol/types.js';
import { type ToolFilter, toolFilterProblem, toolPredicate } from '../catalog/tool-filter.js';
import { handlersProblem } from './host-handlers.js';
import { assertOpen, narrow, type PoolState } from './pool-state.js';
import { ToolSession } from './session.js';
import { InstancedSlot } from '../principals/instanced-slot.js';
import { checkPrincipal, newScope, type Principal, scoped, sessionOf } from '../principals/principal-scope.js';

/** What `McpServerManager.session()` takes. */
export interface SessionOptions {
  servers?: string[];
  tools?: ToolFilter;
  handlers?: HostHandlers;
  principal?: Principal;
}

/**
 * The manager's sessions: each made from its options, checked, and kept until it closes so
 * the manager's shutdown closes it. Kept weakly, so a session its host forgot without
 * closing costs nothing once collected (20,000 of them held 48 MiB).
 */
export class OpenSessions {
  private readonly sessions = new Set<WeakRef<ToolSession>>();
  private readonly forgotten = new FinalizationRegistry<WeakRef<ToolSession>>((ref) => this.sessions.delete(ref));

  constructor(private readonly pool: PoolState) {}

  /** A cheap view of the pool for one chat session (see `McpServerManager.session`). */
  open(options: SessionOptions): ToolSession {
    const { pool } = this;
    assertOpen(pool);
    const principal = checkPrincipal(options.principal);
    const problem = options.tools === undefined ? undefined : toolFilterProblem(options.tools);
    if (problem) throw new McpError('invalid-arguments', `session option ${problem.field} ${problem.message}`, {});
    const handlersWrong = handlersProblem(options.handlers, 'session option');
    if (handlersWrong) throw new McpError('invalid-arguments', handlersWrong, {});
    const filter = toolPredicate(options.tools);
    // Principals: a session gets a scope (its own caller, its principal) when it names a principal or some server runs per session.
    const instanced = principal !== undefined || [...pool.slots.values()].some((slot) => slot instanceof InstancedSlot);
    const scope = instanced || options.handlers ? newScope(principal) : undefined;
    const caller = scope ? sessionOf(pool.router.caller(options.handlers), scope) : pool.router.caller(options.handlers);
    let ref: WeakRef<ToolSession> | undefined;
    const session = new ToolSession(pool, narrow(pool, undefined, options.servers), filter, caller, () => this.closed(ref!), scope?.session);
    ref = new WeakRef(session);
    this.sessions.add(ref);
    this.forgotten.register(session, ref, ref);
    // Its work runs in its principal's (or its own) scope, which servers run per principal or per session read.
    return scope && instanced ? scoped(session, scope) : session;
  }

  /** Closes every session not closed yet. */
  closeAll(): void {
    for (const ref of [...this.sessions]) ref.deref()?.close();
  }

  private closed(ref: WeakRef<ToolSession>): void {
    this.sessions.delete(ref);
    this.forgotten.unregister(ref);
  }
}
