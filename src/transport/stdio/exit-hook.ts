import { signalGroup } from './process-group.js';
import { reaperForget, reaperRunning, reaperWatch } from './reaper.js';

/**
 * The last line of defence against orphaned servers: when the host process ends
 * without closing them, every live server process group is killed. Installed only
 * while at least one group is registered, so importing this module changes nothing.
 *
 * Two halves. In-process, an 'exit' listener SIGKILLs every group at once: it covers
 * `process.exit()`, the event loop running dry, an uncaught exception or unhandled
 * rejection. Out of process, the reaper (see reaper.ts) covers every other end —
 * SIGKILL, an out-of-memory kill, a native crash, and death by any signal.
 *
 * Signals are left alone: while the reaper runs, no SIGINT / SIGTERM / SIGHUP listener
 * is installed, because any listener takes the signal's default action (dying) away
 * from the host, and libraries that step aside when another listener exists (such as
 * signal-exit, which execa's default `cleanup` installs) would then make a host that
 * has no handler of its own ignore the signal. A host without a handler dies by the
 * signal as it would without us, and the reaper kills the servers; a host with one keeps
 * control, and its servers die when it closes them or exits. Only when the reaper cannot
 * run (no /bin/sh, Windows) do signal listeners stand in for it.
 */

const groups = new Set<number>();
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const signalListeners = new Map<NodeJS.Signals, () => void>();
let exitListenerInstalled = false;

/** Has the group led by `pgid` killed if the host exits while it is registered. */
export function registerGroup(pgid: number): void {
  groups.add(pgid);
  reaperWatch(pgid);
  install();
}

/** Forgets a group that is gone, so a later group reusing its number is never hit. */
export function unregisterGroup(pgid: number): void {
  groups.delete(pgid);
  reaperForget(pgid);
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
  if (reaperRunning()) return;
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

/** Without a reaper only: stands in for the default action the listener took away. */
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
