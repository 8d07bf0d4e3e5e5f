import { readdir, readFile } from 'node:fs/promises';

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

/** Whether the OS still knows any process of the group, zombies included; cheap, one syscall. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(groupTarget(pgid), 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return true;
}

/**
 * Answers whether the group led by `pgid` has no live process left, without blocking the
 * event loop. Zombies count as gone: they are dead and only wait for their parent to
 * reap them — often PID 1 once their leader has died, and PID 1 on some machines reaps
 * orphans only every second or two. Only then is /proc read (asynchronously): first the
 * members found last time, and the whole of /proc only when none of them is still alive,
 * so a poll while a group takes its time to die costs one small read.
 */
export class GroupProbe {
  #members: number[] = [];

  constructor(readonly pgid: number) {}

  async isEmpty(): Promise<boolean> {
    if (!groupExists(this.pgid)) return true;
    if (process.platform !== 'linux') return false;
    for (const pid of this.#members) if ((await memberState(pid, this.pgid)) === 'live') return false;
    this.#members = await liveMembers(this.pgid);
    return this.#members.length === 0;
  }
}

/** Whether the group led by `pgid` has no live process left (see {@link GroupProbe}). */
export function groupIsEmpty(pgid: number): Promise<boolean> {
  return new GroupProbe(pgid).isEmpty();
}

type MemberState = 'live' | 'dead' | 'elsewhere';

async function memberState(pid: number, pgid: number): Promise<MemberState> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return 'dead'; // exited and reaped
  }
  // The command name may hold spaces and parentheses; the fields after its last ')' are: state ppid pgrp …
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (Number(pgrp) !== pgid) return 'elsewhere';
  return state === 'Z' || state === 'X' ? 'dead' : 'live';
}

async function liveMembers(pgid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [pgid]; // cannot tell: assume it lives, the caller's bound still holds
  }
  const pids = entries.filter((entry) => entry.charCodeAt(0) >= 48 && entry.charCodeAt(0) <= 57).map(Number);
  const live: number[] = [];
  // In slices, so a host with thousands of processes does not open them all at once.
  for (let i = 0; i < pids.length; i += 64) {
    const slice = pids.slice(i, i + 64);
    const states = await Promise.all(slice.map((pid) => memberState(pid, pgid)));
    states.forEach((state, k) => state === 'live' && live.push(slice[k]!));
  }
  return live;
}
