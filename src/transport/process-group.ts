import { readdirSync, readFileSync } from 'node:fs';

// Windows has no process groups to signal; there only the leader can be reached.
const groupTarget = (pgid: number): number => (process.platform === 'win32' ? pgid : -pgid);

/**
 * Sends `signal` to every process of the group led by `pgid`. Never throws: a group
 * that is already gone is what the caller wants anyway.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(groupTarget(pgid), signal);
  } catch {
    // ESRCH: nobody left. EPERM: not ours to kill; the close bound still holds.
  }
}

/**
 * Whether no live process is left in the group led by `pgid`. Zombies count as gone:
 * they are dead and only wait for their parent to reap them — often PID 1 once their
 * leader has died, and PID 1 on some machines reaps orphans only every second or two.
 */
export function groupIsEmpty(pgid: number): boolean {
  try {
    process.kill(groupTarget(pgid), 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return process.platform === 'linux' && !hasLiveMemberOnLinux(pgid);
}

function hasLiveMemberOnLinux(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    // The command name may hold spaces and parentheses; the fields after its last ')' are: state ppid pgrp …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}
