import type { z } from 'zod';
import type { McpError, McpPhase } from '../errors.js';
import type { Progress } from './types.js';

/** Everything about one request in flight, in one record keyed by its JSON-RPC id. */
export interface PendingRequest {
  readonly id: number;
  /** `tools/call "echo"`: how messages about this request name it. */
  readonly label: string;
  readonly phase: McpPhase;
  readonly schema: z.ZodType;
  readonly timeoutMs: number;
  readonly resetTimeoutOnProgress: boolean;
  readonly onProgress?: (progress: Progress) => void;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: McpError) => void;
  timer?: NodeJS.Timeout;
  totalTimer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * The requests a client is waiting on. Settling a request always goes through here,
 * so its timers and abort listener are removed whichever way it ends.
 */
export class PendingRequests {
  private readonly byId = new Map<number, PendingRequest>();

  get size(): number {
    return this.byId.size;
  }

  add(request: PendingRequest): void {
    this.byId.set(request.id, request);
  }

  get(id: unknown): PendingRequest | undefined {
    // Servers echo the id (and our numeric progress token) as they got it, but be lenient.
    return this.byId.get(typeof id === 'number' ? id : Number(id));
  }

  /** Removes the request and cleans up after it; undefined if it had already settled. */
  take(id: unknown): PendingRequest | undefined {
    const request = this.get(id);
    if (!request) return undefined;
    this.byId.delete(request.id);
    clearTimeout(request.timer);
    clearTimeout(request.totalTimer);
    if (request.onAbort) request.signal?.removeEventListener('abort', request.onAbort);
    return request;
  }

  /** Rejects every request at once, each with the error `errorFor` builds for it. */
  rejectAll(errorFor: (request: PendingRequest) => McpError): void {
    for (const id of [...this.byId.keys()]) {
      const request = this.take(id);
      if (request) request.reject(errorFor(request));
    }
  }
}
