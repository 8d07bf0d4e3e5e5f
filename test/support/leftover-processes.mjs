import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

/** Paths that only a server started by this repo's tests would have on its command line. */
const markers = [resolve(root, 'test/fixtures') + '/', resolve(root, 'node_modules/@modelcontextprotocol/server-'), resolve(root, 'examples') + '/'];

/**
 * A pool daemon of this checkout (detached: once its spawner is gone it descends from no
 * one of the run) whose runtime folder is a temp folder, as every test's is.
 */
const daemonMain = resolve(root, 'dist/share/daemon/main.js');
const isTestDaemon = (cmd) => cmd.includes(daemonMain) && cmd.includes(`--runtime-dir ${tmpdir()}`);

/** pid's parent, start time (clock ticks since boot) and whether it is a zombie, or undefined if gone. */
export function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after its last ')' do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]), start: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function isDescendant(pid, ancestor) {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    const stat = procStat(p);
    if (!stat) return false;
    if (stat.ppid === ancestor) return true;
    p = stat.ppid;
  }
  return false;
}

/**
 * Live server processes of this checkout that a run started (after `since`) and that
 * belong to it: its descendants, or orphans that lost their parent (what a leaking test
 * leaves). Servers of another run or a benchmark going on at the same time are theirs.
 */
export function serverProcesses(runPid, since = 0) {
  const candidates = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    let cmd;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue;
    }
    const daemon = isTestDaemon(cmd);
    if (!daemon && !markers.some((m) => cmd.includes(m))) continue;
    const stat = procStat(pid);
    // A zombie is already dead; only its parent's wait is missing.
    if (!stat || stat.state === 'Z' || stat.start < since) continue;
    candidates.push({ pid, cmd, daemon, ppid: stat.ppid });
  }
  // Pool daemons the run started count wherever they are; so do the servers under them.
  const daemons = candidates.filter((c) => c.daemon).map((c) => c.pid);
  return candidates
    .filter((c) => c.daemon || c.ppid === 1 || isDescendant(c.pid, runPid) || daemons.some((d) => isDescendant(c.pid, d)))
    .map(({ pid, cmd }) => ({ pid, cmd }));
}
