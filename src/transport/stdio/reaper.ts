import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * The out-of-process half of the exit hook: a tiny `/bin/sh` watchdog that outlives
 * nothing. The host holds the only write end of its stdin and tells it, one line each,
 * which process groups to kill (`+pgid`) and to forget (`-pgid`). However the host ends
 * — SIGKILL and an out-of-memory kill included, where no code of the host runs — the
 * kernel closes that pipe; the watchdog reads EOF, sends SIGTERM to every group still
 * listed, SIGKILL to those left half a second later, and exits.
 *
 * It is started on the first registered group, once per host, with an almost empty
 * environment and in its own session, so that a signal to the host's process group (a
 * Ctrl-C, a `kill -- -pgid`) cannot take it down before it has done its work. Neither
 * it nor its pipe keeps the host's event loop alive. Its own signals INT, HUP, TERM
 * are ignored: only the host's end makes it act. Windows has no process groups and
 * no /bin/sh; there the in-process exit hook is all there is.
 */
const SCRIPT = `
trap '' INT HUP TERM QUIT PIPE
groups=' '
while IFS= read -r line; do
  case $line in
    +[0-9]*) groups="$groups\${line#+} " ;;
    -[0-9]*) g=\${line#-}; case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
[ -z "\${groups# }" ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
n=0
while [ $n -lt 5 ]; do
  alive=
  for g in $groups; do kill -s 0 -- "-$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && exit 0
  sleep 0.1 2>/dev/null || break
  n=$((n + 1))
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`;

/** How many times a watchdog that died under a live host is started again. */
const MAX_RESTARTS = 3;

interface Watchdog {
  child: ChildProcess;
  stdin: Writable;
}

let watchdog: Watchdog | undefined;
let restarts = 0;
let unavailable = process.platform === 'win32';
/** The groups the watchdog is to kill, so a restarted one learns them all again. */
const watched = new Set<number>();

/** Has the watchdog kill the group led by `pgid` if the host ends while it is watched. */
export function reaperWatch(pgid: number): void {
  watched.add(pgid);
  if (!ensureStarted()) return;
  send(`+${pgid}\n`);
}

/** Forgets a group that is gone or killed, so its number, once reused, is never signalled. */
export function reaperForget(pgid: number): void {
  if (!watched.delete(pgid)) return;
  if (watchdog) send(`-${pgid}\n`);
}

/** Whether a watchdog is running for this host: only then does SIGKILL of the host leave no server behind. */
export function reaperRunning(): boolean {
  return watchdog !== undefined;
}

/** The watchdog's pid, while it runs (for tests and diagnostics). */
export function reaperPid(): number | undefined {
  return watchdog?.child.pid;
}

function ensureStarted(): boolean {
  if (watchdog) return true;
  if (unavailable) return false;
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', SCRIPT, 'lazy-mcp-reaper'], {
      stdio: ['pipe', 'ignore', 'ignore'],
      // Its own session and group: the host's group signals do not reach it.
      detached: true,
      // Nothing of the host's: no NODE_OPTIONS, no NODE_EXTRA_CA_CERTS, no secrets.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      cwd: '/',
      windowsHide: true,
    });
  } catch {
    unavailable = true;
    return false;
  }
  const stdin = child.stdin;
  if (child.pid === undefined || !stdin) {
    child.on('error', () => {});
    unavailable = true;
    return false;
  }
  const current: Watchdog = { child, stdin };
  watchdog = current;
  child.unref();
  (stdin as Writable & { unref?: () => void }).unref?.();
  // EPIPE when it died; its 'exit' tells the rest.
  stdin.on('error', () => {});
  child.on('error', () => {});
  child.once('exit', () => {
    if (watchdog !== current) return;
    watchdog = undefined;
    // Killed under a live host (someone's `kill`, an OOM pick): start another that knows every group.
    if (restarts++ >= MAX_RESTARTS) {
      unavailable = true;
      return;
    }
    if (watched.size > 0 && ensureStarted()) send([...watched].map((pgid) => `+${pgid}\n`).join(''));
  });
  return true;
}

function send(lines: string): void {
  const stdin = watchdog?.stdin;
  if (stdin && stdin.writable) stdin.write(lines);
}
