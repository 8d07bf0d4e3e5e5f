import { readdirSync, readFileSync } from 'node:fs';
import { McpServerManager, type ManagerOptions } from '../../../src/manager/manager.js';
import { daemonMain } from '../../../src/share/daemon/attach.js';
import { daemonStatus, stopDaemon } from '../../../src/share/daemon/control.js';
import type { SharedOptions } from '../../../src/share/daemon/paths.js';
import { textOf, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

/**
 * Every test gets its own runtime folder (a temp folder: the suite's leftover check knows
 * daemons by it), so tests never touch the user's daemon or each other's; after each test
 * its managers are shut down and its daemons stopped.
 */
const used: SharedOptions[] = [];
const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
  await Promise.all(used.splice(0).map((o) => stopDaemon(o, 5000).catch(() => undefined)));
});

/** Options for a private daemon of this test. */
export function sharedOptions(extra: SharedOptions = {}): SharedOptions & { runtimeDir: string } {
  const options = { runtimeDir: tempDir('lazy-mcp-daemon-test-'), idleTimeoutMs: 120_000, ...extra };
  used.push(options);
  return options;
}

/** Also stops this version's daemon after the test. */
export function alsoStop(options: SharedOptions): void {
  used.push(options);
}

export function sharedManager(servers: Record<string, object>, shared: SharedOptions, options: ManagerOptions = {}): McpServerManager {
  const manager = McpServerManager.fromConfig({ mcpServers: servers }, { ...options, shared });
  managers.push(manager);
  return manager;
}

/** Live processes whose command line holds every one of `parts` (zombies are dead). */
export function processesWith(...parts: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (parts.every((p) => cmd.includes(p))) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** The daemon processes serving `runtimeDir`. */
export const daemonsIn = (runtimeDir: string): number[] => processesWith(daemonMain, runtimeDir);

export async function daemonPid(shared: SharedOptions): Promise<number> {
  const status = await daemonStatus(shared);
  if (!status) throw new Error('no daemon is running');
  return status.pid;
}

/**
 * A long `slow` call to server `e` that its caller aborts once it is in flight: what the
 * caller got, and what the server saw of the cancellation.
 */
export async function abortedInFlight(manager: McpServerManager): Promise<{ outcome: unknown; seen: { requestId: number }[] }> {
  const abort = new AbortController();
  const call = manager.callTool('mcp__e__slow', { ms: 20000 }, { signal: abort.signal }).then(() => undefined, (e: unknown) => e);
  if (!(await waitFor(() => manager.metrics().e?.inFlight === 1))) throw new Error('the slow call never went in flight');
  abort.abort();
  const outcome = await call;
  return { outcome, seen: await cancellationsSeen(() => manager.callTool('mcp__e__cancellations')) };
}

/** What the server saw of `notifications/cancelled` (echo-server's `cancellations` tool). */
export async function cancellationsSeen(call: () => Promise<{ content: unknown[] }>): Promise<{ requestId: number }[]> {
  let seen: { requestId: number }[] = [];
  const deadline = Date.now() + 5000;
  while (seen.length === 0 && Date.now() < deadline) seen = JSON.parse(textOf(await call()));
  return seen;
}
