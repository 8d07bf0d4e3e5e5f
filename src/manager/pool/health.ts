import type { McpError } from '../../errors.js';

/** A server's `healthCheck` setting: probe it every `intervalMs`, each probe allowed `timeoutMs`. */
export interface HealthCheck {
  /** Time between the end of one probe and the start of the next, in ms. */
  intervalMs: number;
  /** Time a probe may take, in ms. Default: `intervalMs`. */
  timeoutMs?: number;
}

/** Failed probes in a row after which a server counts as wedged and is restarted. */
export const FAILED_PROBES_TO_RESTART = 3;

/**
 * Probes one running connection while it is up. Probes run one at a time on unref'd
 * timers, so they never keep the host alive, and they go around the slot's activity
 * count, so they never keep an idle server from being stopped. An answer of any kind,
 * a JSON-RPC error included, shows the server is alive; a probe that times out or
 * cannot be sent counts as failed.
 */
export class HealthMonitor {
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly check: HealthCheck,
    private readonly probe: (timeoutMs: number) => Promise<void>,
    private readonly onWedged: (lastError: McpError) => void,
  ) {
    this.schedule();
  }

  /** Stops probing. Idempotent; a probe in flight is ignored when it settles. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.run(), this.check.intervalMs).unref();
  }

  private async run(): Promise<void> {
    let failed: McpError | undefined;
    try {
      await this.probe(this.check.timeoutMs ?? this.check.intervalMs);
    } catch (error) {
      if ((error as McpError).code !== 'rpc-error') failed = error as McpError;
    }
    if (this.closed) return;
    this.failures = failed ? this.failures + 1 : 0;
    if (failed && this.failures >= FAILED_PROBES_TO_RESTART) {
      this.close();
      this.onWedged(failed);
      return;
    }
    this.schedule();
  }
}
