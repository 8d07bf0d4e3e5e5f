import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

/**
 * CPU pinning with `taskset`. On this VM a child's latency depends on which vCPU it runs
 * on, so two clients compared side by side must have their children on the same CPUs.
 * The host pins all of its own threads (`-a`); a child inherits the affinity of the
 * thread that spawns it, so pinning the host before a spawn places the child.
 */
export const ALL_CPUS = `0-${cpus().length - 1}`;

let available: boolean | undefined;

/** Whether `taskset` works here; without it the bench runs unpinned and says so. */
export function canPin(): boolean {
  if (available === undefined) {
    try {
      execFileSync('taskset', ['-pc', String(process.pid)], { stdio: 'ignore' });
      available = true;
    } catch {
      available = false;
    }
  }
  return available;
}

/** Pins every thread of this process to `list` (taskset syntax: `0`, `1`, `0-1`); a no-op without taskset. */
export function pin(list: string): void {
  if (!canPin()) return;
  execFileSync('taskset', ['-a', '-pc', list, String(process.pid)], { stdio: 'ignore' });
}

/** Runs `work` with the host on `host` and the children it spawns inside `spawn` on `children`. */
export async function placed<T>(children: string, spawn: () => Promise<T>, host: string): Promise<T> {
  pin(children);
  try {
    return await spawn();
  } finally {
    pin(host);
  }
}
