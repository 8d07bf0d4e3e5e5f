import { parseArgs } from 'node:util';
import { daemonStatus, stopDaemon } from '../share/daemon/control.js';
import { daemonPaths } from '../share/daemon/paths.js';
import type { DaemonStatus } from '../share/daemon/wire.js';
import { EXIT } from './args.js';
import { packageVersion } from '../util/package-info.js';
import { oneLine, table } from './format.js';

const DAEMON_USAGE = `lazy-mcp daemon — the per-user pool daemon that "lazy-mcp serve" shares
servers through

Usage:
  lazy-mcp daemon status [--json]   its clients, and its servers (fingerprint,
                                    pid, sessions, memory)
  lazy-mcp daemon stop              stop it and its servers gracefully, bounded
  lazy-mcp daemon log               where its log file is

The daemon starts on demand and exits after 10 idle minutes
(LAZY_MCP_DAEMON_IDLE_MS); its folder is $LAZY_MCP_RUNTIME_DIR, else
$XDG_RUNTIME_DIR/lazy-mcp, else the state dir.
`;

/** Runs `lazy-mcp daemon …`; resolves to the exit status. */
export async function daemon(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`lazy-mcp daemon: ${oneLine((error as Error).message)} (see lazy-mcp daemon --help)\n`);
    return EXIT.usage;
  }
  const [action, ...rest] = parsed.positionals;
  if (parsed.values.help) {
    // Asked for, so it is the output: stdout, as for every command.
    process.stdout.write(DAEMON_USAGE);
    return EXIT.ok;
  }
  if (action === undefined) {
    process.stderr.write('lazy-mcp daemon: no action given; expected status, stop or log (see lazy-mcp daemon --help)\n');
    return EXIT.usage;
  }
  if (rest.length > 0 || !['status', 'stop', 'log'].includes(action)) {
    process.stderr.write(`lazy-mcp daemon: unknown action ${JSON.stringify([action, ...rest].join(' '))}; expected status, stop or log\n`);
    return EXIT.usage;
  }
  try {
    if (action === 'log') {
      process.stdout.write(`${daemonPaths({}, packageVersion()).log}\n`);
      return EXIT.ok;
    }
    if (action === 'stop') {
      const pid = await stopDaemon();
      process.stderr.write(pid === undefined ? 'lazy-mcp daemon: not running\n' : `lazy-mcp daemon: stopped (pid ${pid})\n`);
      return EXIT.ok;
    }
    const status = await daemonStatus();
    if (parsed.values.json) process.stdout.write(`${JSON.stringify(status ?? { running: false }, null, 2)}\n`);
    else process.stdout.write(status ? describe(status) : 'not running\n');
    return EXIT.ok;
  } catch (error) {
    process.stderr.write(`lazy-mcp daemon: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
}

function describe(s: DaemonStatus): string {
  const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : `${(bytes / 1048576).toFixed(1)} MB`);
  const head = `lazy-mcp ${s.version} daemon, pid ${s.pid}, up ${Math.round(s.uptimeMs / 1000)} s, ${mb(s.rssBytes)}; ${s.clients.length} client process(es); socket ${s.socket}\n`;
  if (s.servers.length === 0) return `${head}no servers running\n`;
  const rows = s.servers.map((v) => [v.name, v.fingerprint, v.pid === undefined ? '-' : String(v.pid), v.state, String(v.sessions), mb(v.rssBytes)]);
  return `${head}${table(['SERVER', 'FINGERPRINT', 'PID', 'STATE', 'SESSIONS', 'MEMORY'], rows)}\n`;
}
