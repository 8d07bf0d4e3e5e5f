import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

/** Paths that only a server started by this repo's tests would have on its command line. */
const markers = [resolve(root, 'test/fixtures') + '/', resolve(root, 'node_modules/@modelcontextprotocol/server-'), resolve(root, 'examples') + '/'];

/** Processes on this machine whose command line points into this checkout's servers. */
export function serverProcesses() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd;
    try {
      cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      // A zombie is already dead; only its parent's wait is missing.
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
    } catch {
      continue;
    }
    if (markers.some((m) => cmd.includes(m))) found.push({ pid: Number(entry), cmd });
  }
  return found;
}
