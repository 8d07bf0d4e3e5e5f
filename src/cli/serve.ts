import { parseArgs } from 'node:util';
import { serveGateway } from '../gateway/serve-gateway.js';
import { McpServerManager } from '../index.js';
import { parseConfigText } from '../manager/config/config-text.js';
import { EXIT, UsageError } from './args.js';
import { chooseConfig } from './config-choice.js';
import { prepareEnvironment } from './environment.js';
import { packageVersion } from '../util/package-info.js';
import { oneLine } from './format.js';
import { gatewayToken } from './gateway-token.js';
import { isLoopbackHost } from '../gateway/loopback-host.js';
import type { ClusterOptions } from '../share/cluster/options.js';
import { type GatewayPrincipals, gatewayPrincipals } from '../share/principals/gateway-config.js';
import { mustBe } from '../util/check.js';
import { fs } from '../util/lazy-builtins.js';

const SERVE_USAGE = `lazy-mcp serve — the pool as one MCP server, for Claude Desktop, Claude
Code, Cursor or VS Code

Usage:
  lazy-mcp serve [--config FILE] [--cache-dir DIR] [--search] [--no-shared]
                 [--verbose]
  lazy-mcp serve --http [--port N] [--host ADDR] [--token-file FILE] [...]
  lazy-mcp serve --http --cluster redis://HOST:6379
                 --advertise http://ME:PORT [...]

Options:
  --config FILE     config file (default: $LAZY_MCP_CONFIG, else the nearest
                    .mcp.json, .vscode/mcp.json or .cursor/mcp.json from here
                    up; none found: exit 2)
  --cache-dir DIR   keep tool lists in DIR: tools/list starts no server on
                    later runs
  --search          expose search_tools and call_tool instead of every tool
  --no-shared       stdio: run this session's own servers instead of sharing
                    them with every other session through the pool daemon
  --http            serve Streamable HTTP instead of stdio
  --port N          HTTP port (default: the config's gateway.port, else 8808;
                    0 picks one)
  --host ADDR       HTTP address (default 127.0.0.1); beyond loopback a token
                    is required
  --token-file FILE require "Authorization: Bearer <token>" on every HTTP
                    request, the token being FILE's first line (or set
                    LAZY_MCP_TOKEN)
  --token T         the same with the token on the command line, where every
                    local user can read it (a warning says so)
  --cluster URL     HTTP: join the cluster of every gateway naming this Redis
                    (or Valkey): one process per server across them, listings
                    and OAuth tokens shared, sessions routed to the member that
                    holds them (no sticky load balancer needed); the members'
                    shared secret (32+ characters) is read from
                    LAZY_MCP_CLUSTER_SECRET
  --advertise URL   how the other members reach this one (default
                    http://HOST:PORT)
  --auth jwt        HTTP as an OAuth 2.1 resource server: every request
                    carries a bearer JWT, checked against --jwks-url; its
                    subject is the caller's principal
  --issuer URL      the tokens' required issuer (iss)
  --audience ID     the tokens' required audience (aud)
  --jwks-url URL    the issuer's key set (https; http on loopback only)
  --jwt-alg A,B     accepted signature algorithms (default
                    RS256,PS256,ES256,EdDSA)
  --secrets PATH    the principals' credentials: a JSON file
                    { "<principal>": { NAME: value } } (0600) or a folder of
                    <principal>.json files (0700)
  --verbose         show server stderr on stderr

The config file may hold
  "gateway": { "search": true, "port": 8808, "host": "127.0.0.1" },
and for --auth jwt: "auth": { "type": "jwt", "issuer", "audience", "jwksUrl" },
"policies": [{ "when": { "scopes": [...] }, "tools": { "allow": [...] } }],
"limits": { "principal": { "capacity": 60, "refillPerSecond": 1 },
"tool": {...} } and "secrets": PATH.
stdio ends when the client closes stdin; HTTP ends on SIGINT or SIGTERM. Every
server is stopped either way; shared servers stay with the pool daemon
(lazy-mcp daemon status).
`;

const OPTIONS = {
  config: { type: 'string' },
  'cache-dir': { type: 'string' },
  search: { type: 'boolean' },
  'no-shared': { type: 'boolean' },
  http: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  cluster: { type: 'string' },
  advertise: { type: 'string' },
  auth: { type: 'string' },
  issuer: { type: 'string' },
  audience: { type: 'string' },
  'jwks-url': { type: 'string' },
  'jwt-alg': { type: 'string' },
  secrets: { type: 'string' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The `gateway` section a config file may have. */
interface GatewaySection {
  search?: boolean;
  port?: number;
  host?: string;
  [principals: string]: unknown;
}

const DEFAULT_PORT = 8808;

/** Runs `lazy-mcp serve` until its client or a signal ends it; resolves to the exit status. Never writes to stdout but MCP. */
export async function serve(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (error) {
    process.stderr.write(`lazy-mcp serve: ${oneLine((error as Error).message)} (see lazy-mcp serve --help)\n`);
    return EXIT.usage;
  }
  if (values.help) {
    // Asked for, so it is the output: stdout, as for every command (a client never sends --help).
    process.stdout.write(SERVE_USAGE);
    return EXIT.ok;
  }
  let givenPort: number | undefined;
  try {
    // A usage error is told as such before anything is looked up (no config is needed to say it).
    givenPort = values.port === undefined ? undefined : parsePort(values.port);
  } catch (error) {
    process.stderr.write(`lazy-mcp serve: ${oneLine((error as Error).message)}\n`);
    return EXIT.usage;
  }
  prepareEnvironment();
  let configPath: string;
  let manager: McpServerManager;
  let section: GatewaySection;
  let port: number;
  let token: string | undefined;
  let principals: GatewayPrincipals = {};
  try {
    // The same lookup as every other command: a host that starts us elsewhere must not get an example's tools.
    configPath = chooseConfig(values.config === undefined ? {} : { config: values.config }).file.path;
    section = gatewaySection(configPath);
    port = givenPort ?? section.port ?? DEFAULT_PORT;
    principals = gatewayPrincipals(values, section, configPath);
    if (principals.auth && !values.http) throw new UsageError('--auth jwt (or gateway.auth) needs --http: stdio has one client, with no token to check');
    if (values.http) {
      const given = gatewayToken({
        ...(values.token === undefined ? {} : { token: values.token }),
        ...(values['token-file'] === undefined ? {} : { tokenFile: values['token-file'] }),
        ...(process.env.LAZY_MCP_TOKEN === undefined ? {} : { env: process.env.LAZY_MCP_TOKEN }),
      });
      // Not for any child to inherit (an entry with inheritEnv passes the whole environment on).
      delete process.env.LAZY_MCP_TOKEN;
      for (const warning of given.warnings) process.stderr.write(`lazy-mcp serve: warning: ${warning}\n`);
      token = given.token;
      const host = values.host ?? section.host;
      // Checked before any server is set up: beyond loopback, no token means every tool for anyone.
      if (principals.auth && token !== undefined) throw new UsageError('give a token or --auth jwt, not both');
      if (host !== undefined && !isLoopbackHost(host) && token === undefined && !principals.auth) {
        throw new UsageError(
          `refusing to listen on ${host}${values.host === undefined ? ` (gateway.host in ${configPath})` : ''} without a token; give --token-file FILE or set LAZY_MCP_TOKEN, or listen on 127.0.0.1`,
        );
      }
    }
    let cluster: ClusterOptions | undefined;
    if (values.cluster !== undefined || values.advertise !== undefined) {
      if (!values.http || values.cluster === undefined) throw new UsageError('--cluster and --advertise need --http (and --advertise needs --cluster)');
      const bound = values.host ?? section.host ?? '127.0.0.1';
      const advertise = values.advertise ?? (port === 0 ? undefined : `http://${bound.includes(':') ? `[${bound}]` : bound}:${port}`);
      if (advertise === undefined) throw new UsageError('--cluster with --port 0 needs --advertise: the other members must know where to reach this one');
      const secret = process.env.LAZY_MCP_CLUSTER_SECRET;
      // Not for any child to inherit.
      delete process.env.LAZY_MCP_CLUSTER_SECRET;
      // The gateway serves the members' endpoint on its own port.
      cluster = { redis: values.cluster, advertise, listen: false, ...(secret === undefined ? {} : { secret }) };
      const { resolveCluster } = await import('../share/cluster/options.js');
      resolveCluster(cluster); // a wrong value is told now, as a usage error
    }
    manager = McpServerManager.fromFile(configPath, {
      ...(cluster ? { cluster } : {}),
      clientInfo: { name: 'lazy-mcp', version: packageVersion() },
      // Backends may ask; each question goes to the gateway client whose call caused it.
      capabilities: { elicitation: true, sampling: true },
      // One process per server for every session of the machine (stdio: one serve per host session).
      shared: !values.http && !values['no-shared'],
      ...(values['cache-dir'] === undefined ? {} : { cacheDir: values['cache-dir'] }),
      ...(principals.secrets === undefined ? {} : { credentials: (await import('../share/principals/secrets-file.js')).secretsResolver(principals.secrets) }),
    });
  } catch (error) {
    process.stderr.write(`lazy-mcp serve: ${oneLine((error as Error).message)}\n`);
    return EXIT.usage;
  }
  if (values.verbose) manager.on('stderr', ({ server, line }) => process.stderr.write(`[${server}] ${line}\n`));
  manager.on('exit', ({ server, error }) => error && process.stderr.write(`lazy-mcp serve: ${error.message}\n`));

  const host = values.host ?? section.host;
  let served;
  try {
    served = await serveGateway(manager, {
      search: values.search ?? section.search ?? false,
      serverInfo: { name: 'lazy-mcp', version: packageVersion() },
      ...(values.http
        ? { transport: 'http' as const, http: { port, ...(host === undefined ? {} : { host }), ...(token === undefined ? {} : { token }), ...(principals.auth ? { auth: principals.auth } : {}) } }
        : {}),
      ...(principals.policies ? { policies: principals.policies } : {}),
      ...(principals.limits ? { limits: principals.limits } : {}),
    });
  } catch (error) {
    process.stderr.write(`lazy-mcp serve: ${(error as Error).message}\n`);
    await manager.shutdown();
    return EXIT.failed;
  }
  if (served.url) process.stderr.write(`lazy-mcp serve: listening on ${served.url}\n`);

  const stop = () => void served.close();
  process.on('SIGINT', stop).on('SIGTERM', stop);
  let failure: Error | undefined;
  try {
    failure = await served.done;
  } finally {
    await served.close();
    await manager.shutdown();
    process.off('SIGINT', stop).off('SIGTERM', stop);
    // Nothing of ours is left to read: let the process end even if stdin is still referenced.
    process.stdin.unref?.();
  }
  if (failure) {
    process.stderr.write(`lazy-mcp serve: ${failure.message}\n`);
    return EXIT.failed;
  }
  return EXIT.ok;
}

function gatewaySection(path: string): GatewaySection {
  let parsed: unknown;
  try {
    parsed = parseConfigText(fs.readFileSync(path, 'utf8'));
  } catch {
    return {}; // the manager reports an unreadable or invalid file with the details
  }
  const section = (parsed as { gateway?: unknown } | undefined)?.gateway;
  if (section === undefined) return {};
  if (typeof section !== 'object' || section === null || Array.isArray(section)) throw new UsageError(`${path}: ${mustBe('gateway', 'an object', section)}`);
  const { search, port, host } = section as Record<string, unknown>;
  if (search !== undefined && typeof search !== 'boolean') throw new UsageError(`${path}: ${mustBe('gateway.search', 'true or false', search)}`);
  if (port !== undefined && !(Number.isSafeInteger(port) && (port as number) >= 0 && (port as number) < 65536)) {
    throw new UsageError(`${path}: ${mustBe('gateway.port', 'a whole number from 0 to 65535', port)}`);
  }
  if (host !== undefined && typeof host !== 'string') throw new UsageError(`${path}: ${mustBe('gateway.host', 'a string', host)}`);
  return section as GatewaySection;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(text)}`);
  return port;
}
