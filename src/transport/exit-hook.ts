import { signalGroup } from './process-group.js';

/**
 * The last line of defence against orphaned servers: when the host process ends
 * without closing them, every live server process group gets SIGKILL. Installed only
 * while at least one group is registered, so importing this module changes nothing.
 *
 * Covered: `process.exit()`, the event loop running dry, an uncaught exception or
 * unhandled rejection (all emit 'exit'), and SIGINT / SIGTERM / SIGHUP. Not covered:
 * SIGKILL of the host or a native crash — nothing runs then.
 */

const groups = new Set<number>();
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const signalListeners = new Map<NodeJS.Signals, () => void>();
let exitListenerInstalled = false;

/** Has the group led by `pgid` killed if the host exits while it is registered. */
export function registerGroup(pgid: number): void {
  groups.add(pgid);
  install();
}

/** Forgets a group that is gone, so a later group reusing its number is never hit. */
export function unregisterGroup(pgid: number): void {
  groups.delete(pgid);
  if (groups.size === 0) uninstall();
}

/** The groups the hook would kill now (for tests and diagnostics). */
export function registeredGroups(): number[] {
  return [...groups];
}

function killAll(): void {
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
}

function install(): void {
  if (!exitListenerInstalled) {
    process.on('exit', killAll);
    exitListenerInstalled = true;
  }
  for (const signal of SIGNALS) {
    if (signalListeners.has(signal)) continue;
    const listener = () => onSignal(signal);
    signalListeners.set(signal, listener);
    process.on(signal, listener);
  }
}

function uninstall(): void {
  if (exitListenerInstalled) process.off('exit', killAll);
  exitListenerInstalled = false;
  for (const [signal, listener] of signalListeners) process.off(signal, listener);
  signalListeners.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  // With a listener of its own the host decides what the signal means — maybe a graceful
  // shutdown that closes the servers itself; if it then exits, the 'exit' hook still runs.
  if (process.listenerCount(signal) > 1) return;
  killAll();
  // Our listener replaced the default action (die by this signal); restore it and let
  // the signal do what it would have done without us.
  const listener = signalListeners.get(signal);
  if (listener) process.off(signal, listener);
  signalListeners.delete(signal);
  process.kill(process.pid, signal);
}
