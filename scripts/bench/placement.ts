import { cpus } from 'node:os';
import { ALL_CPUS, canPin } from './pin.js';

/** Where the host and the servers' children run (taskset CPU lists). */
export interface Placement {
  host: string;
  children: string;
}

export interface Placements {
  pinned: boolean;
  /** Throughput and the 5 MiB result: the host on one CPU, every child on the other. */
  split: Placement;
  /**
   * Sequential latency and cold starts: host and children on the same CPU, so both
   * clients' children see the same vCPU and a round trip never crosses vCPUs.
   */
  shared: Placement;
}

export function placements(): Placements {
  const pinned = canPin();
  if (!pinned) return { pinned, split: { host: ALL_CPUS, children: ALL_CPUS }, shared: { host: ALL_CPUS, children: ALL_CPUS } };
  const last = String(cpus().length - 1);
  return {
    pinned,
    split: cpus().length > 1 ? { host: '0', children: last } : { host: '0', children: '0' },
    shared: { host: '0', children: '0' },
  };
}
