/** Returned by every `on…` registration; `dispose()` removes the listener and may be called twice. */
export interface Disposable {
  dispose(): void;
}

/** Listeners whose exception was already reported. */
const reported = new WeakSet<object>();

/**
 * The one policy for a listener that throws (or rejects): it is isolated, so it never
 * reaches the caller's code (a stream callback, the pool's promise chains) nor stops the
 * other listeners, and reported once per listener through `process.emitWarning` (code
 * `LAZY_MCP_LISTENER`), not as an event, which could throw again.
 */
export function callIsolated(owner: string, event: string, listener: (...args: never[]) => unknown, args: readonly unknown[], self?: unknown): void {
  try {
    const result: unknown = (listener as (...a: unknown[]) => unknown).apply(self, args as unknown[]);
    if (result instanceof Promise) result.catch((error: unknown) => listenerFailed(owner, event, listener, error));
  } catch (error) {
    listenerFailed(owner, event, listener, error);
  }
}

function listenerFailed(owner: string, event: string, listener: object, error: unknown): void {
  if (reported.has(listener)) return;
  reported.add(listener);
  process.emitWarning(`a ${event} listener of ${owner} threw (reported once per listener): ${(error as Error)?.stack ?? String(error)}`, { code: 'LAZY_MCP_LISTENER' });
}

/** A set of listeners of one event, each called under {@link callIsolated}. */
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>();

  constructor(
    private readonly owner = 'a channel',
    private readonly event = 'channel',
  ) {}

  add(listener: (...args: A) => void): Disposable {
    this.set.add(listener);
    return { dispose: () => void this.set.delete(listener) };
  }

  get size(): number {
    return this.set.size;
  }

  fire(...args: A): void {
    for (const listener of this.set) callIsolated(this.owner, this.event, listener, args);
  }

  clear(): void {
    this.set.clear();
  }
}
