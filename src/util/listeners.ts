import type { Disposable } from '../transport/channel.js';

/**
 * A set of listeners that never lets one listener's exception reach the caller's code
 * (a stream callback, a promise chain): each runs isolated, its error dropped.
 */
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>();

  add(listener: (...args: A) => void): Disposable {
    this.set.add(listener);
    return { dispose: () => void this.set.delete(listener) };
  }

  get size(): number {
    return this.set.size;
  }

  fire(...args: A): void {
    for (const listener of this.set) {
      try {
        listener(...args);
      } catch {
        // A listener's bug must not break the channel.
      }
    }
  }

  clear(): void {
    this.set.clear();
  }
}
