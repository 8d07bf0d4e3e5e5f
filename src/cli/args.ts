import { parseArgs } from 'node:util';
import { HOST_NAMES, type HostName } from '../manager/config/config-discovery.js';
import { oneLine } from './format.js';
import { closest, didYouMean } from './suggest.js';

/**
 * Exit statuses of `lazy-mcp`: 0 ok; 1 a tool or server error (the tool's own `isError`, a
 * failed call or read, a server that could not be listed or started); 2 a usage or config
 * error (the command line, or a config file or entry, a server or tool name that does not exist).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake on the command line, or no config to run on: reported in one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What to run, as parsed from the command line. */
export type Command =
  | { name: 'tools'; servers: string[]; long: boolean }
  | { name: 'search'; query: string; servers: string[]; limit?: number }
  | { name: 'tool'; tool: string }
  | { name: 'call'; tool: string; args?: string; pairs?: string[]; argsFile?: string; timeout?: number; maxTime?: number }
  | { name: 'resources'; servers: string[] }
  | { name: 'read'; server: string; uri: string; timeout?: number; maxTime?: number }
  | { name: 'status'; watch?: { intervalMs: number } }
  | { name: 'login'; server: string; principal?: string }
  | { name: 'prompts'; servers: string[] }
  | { name: 'prompt'; prompt: string; args?: string; timeout?: number; maxTime?: number };

/** Options every command takes. */
export interface GlobalOptions {
  /** `--config FILE`; undefined means the default lookup. */
  config?: string;
  /** `--from APP`: that application's user-level MCP config. */
  from?: HostName;
  /** `--cache-dir DIR`: turns the tool manifest cache on. */
  cacheDir?: string;
  json: boolean;
  verbose: boolean;
}

type Invocation = { action: 'help' } | { action: 'version' } | { action: 'run'; command: Command; options: GlobalOptions };

export const USAGE = `lazy-mcp — many MCP servers as one lazy, shared pool

Usage:
  lazy-mcp tools [--server S]... [--long] [--json]
  lazy-mcp search <words>... [--limit N] [--server S]... [--json]
  lazy-mcp tool <public-name> [--json]
  lazy-mcp call <public-name> [json-args | key=value... | --args-file F]
                [--timeout MS] [--max-time MS] [--json]
  lazy-mcp resources [--server S]... [--json]
  lazy-mcp read <server> <uri> [--timeout MS] [--max-time MS] [--json]
  lazy-mcp status [--watch [--interval MS]] [--json]
  lazy-mcp login <server> [--principal ID]
  lazy-mcp prompts [--server S]... [--json]
  lazy-mcp prompt <public-name> [json-args] [--timeout MS] [--json]
  lazy-mcp serve [--http] [--no-shared] [options]   (see lazy-mcp serve --help)
  lazy-mcp daemon status|stop|log [--json]

Commands:
  tools       list every tool, one line each: public name, first sentence of its
              description; --long: server and whole first line too
  search      the tools best matching some words ("remember a fact", a tool
              name); lists the tools first when none is known yet
  tool        show one tool: its description and input schema
  call        call one tool by its public name (mcp__<server>__<tool>), print
              its content; arguments are one JSON object or key=value pairs
              (typed by the tool's schema)
  resources   list the servers' resources and resource templates
  read        read one resource of one server
  status      start the servers as "tools" does, then show each one's state;
              --watch keeps showing states and figures, following config
              edits, until Ctrl-C or the end of stdin
  login       authorize lazy-mcp with a remote (OAuth) server (prints the URL)
  prompts     list every prompt: public name, server, arguments, description
  prompt      get one prompt by its public name, its arguments as a JSON
              object of strings
  serve       serve the pool as one MCP server, over stdio or Streamable HTTP,
              for an MCP client (Claude Desktop, Claude Code, Cursor, VS Code);
              stdio sessions share servers through the pool daemon
  daemon      the per-user pool daemon: its clients and servers, stop, its log

Options:
  --config FILE     config file (default: $LAZY_MCP_CONFIG, else the nearest
                    .mcp.json, .vscode/mcp.json or .cursor/mcp.json from here
                    up)
  --from APP        an app's own MCP servers: claude-desktop, claude-code,
                    cursor or vscode
  --cache-dir DIR   keep tool lists in DIR: later runs list and search tools
                    without starting servers
  --server S        only this server (repeatable)
  --long            (tools) the server and the whole first line of each
                    description, wrapped to the terminal
  --limit N         (search) most tools shown (default 8)
  --watch           (status) refresh the figures every --interval MS (default
                    1000); with --json, one line a refresh
  --args-file F     read the call's JSON arguments from file F ("-" for stdin)
  --principal ID    (login) authorize for this principal, for a server run per
                    principal; its tokens are kept apart from everyone's
  --timeout MS      time allowed without progress, in milliseconds; progress
                    restarts it (default: the server's timeout, else 30000)
  --max-time MS     time allowed for the whole request, progress or not
  --json            print the result as JSON, and errors as JSON on stderr
  --verbose         stream server stderr and start progress to stderr; show
                    stacks on errors
  -h, --help        show this help
  --version         print the version

Exit status: 0 ok; 1 a tool or server error; 2 a usage or config error, or a
server or tool name that does not exist. NO_COLOR turns colour off.
`;

const OPTIONS = {
  config: { type: 'string' },
  from: { type: 'string' },
  'cache-dir': { type: 'string' },
  server: { type: 'string', multiple: true },
  'args-file': { type: 'string' },
  principal: { type: 'string' },
  timeout: { type: 'string' },
  'max-time': { type: 'string' },
  watch: { type: 'boolean' },
  interval: { type: 'string' },
  long: { type: 'boolean' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type OptionName = keyof typeof OPTIONS;

/** Per command: the options it takes beyond the global ones, and its positional arguments. */
const COMMANDS: Record<Command['name'], { options: OptionName[]; required: string[]; optional: string[]; variadic?: boolean }> = {
  tools: { options: ['server', 'long'], required: [], optional: [] },
  search: { options: ['server', 'limit'], required: ['words'], optional: [], variadic: true },
  tool: { options: [], required: ['public-name'], optional: [] },
  call: { options: ['args-file', 'timeout', 'max-time'], required: ['public-name'], optional: ['json-args'], variadic: true },
  resources: { options: ['server'], required: [], optional: [] },
  read: { options: ['timeout', 'max-time'], required: ['server', 'uri'], optional: [] },
  status: { options: ['watch', 'interval'], required: [], optional: [] },
  login: { options: ['principal'], required: ['server'], optional: [] },
  prompts: { options: ['server'], required: [], optional: [] },
  prompt: { options: ['timeout', 'max-time'], required: ['public-name'], optional: ['json-args'] },
};

const COMMAND_LIST = 'tools, search, tool, call, resources, read, status, login, prompts, prompt, serve and daemon';

/** `serve` parses its own options (see serve.ts), so it is not in {@link COMMANDS}; it is a command all the same. */
const SERVE = 'serve';
/** `daemon` too (see daemon.ts). */
const DAEMON = 'daemon';

const GLOBAL: OptionName[] = ['config', 'from', 'cache-dir', 'json', 'verbose', 'help', 'version'];

/** Parses `argv` (without node and the script); throws {@link UsageError}. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parserMessage(error as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) return { action: 'help' };
  if (values.version) return { action: 'version' };

  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError(`no command given; the commands are ${COMMAND_LIST}`);
  // Options before it would be read as the one-shot commands' options, not serve's.
  if (name === SERVE) throw new UsageError('"serve" takes its options after it: lazy-mcp serve [options]');
  if (name === DAEMON) throw new UsageError('"daemon" takes its options after it: lazy-mcp daemon status|stop|log [--json]');
  if (!Object.hasOwn(COMMANDS, name)) {
    throw new UsageError(`unknown command ${JSON.stringify(name)}${didYouMean(closest(name, [...Object.keys(COMMANDS), SERVE, DAEMON])) || `; the commands are ${COMMAND_LIST}`}`);
  }
  const spec = COMMANDS[name as Command['name']];

  for (const option of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(option) && !spec.options.includes(option)) throw new UsageError(`option --${option} does not apply to "${name}"`);
  }
  if (rest.length < spec.required.length) throw new UsageError(`"${name}" needs ${spec.required.map((p) => `<${p}>`).join(' ')}`);
  if (!spec.variadic && rest.length > spec.required.length + spec.optional.length) {
    throw new UsageError(`unexpected argument ${JSON.stringify(rest[spec.required.length + spec.optional.length])} for "${name}"`);
  }
  if (values.config !== undefined && values.from !== undefined) throw new UsageError('give either --config or --from, not both');
  if (values.from !== undefined && !(HOST_NAMES as readonly string[]).includes(values.from)) {
    throw new UsageError(`--from must be one of ${HOST_NAMES.join(', ')}, got ${JSON.stringify(values.from)}${didYouMean(closest(values.from, HOST_NAMES))}`);
  }

  const options: GlobalOptions = {
    ...(values.config === undefined ? {} : { config: values.config }),
    ...(values.from === undefined ? {} : { from: values.from as HostName }),
    ...(values['cache-dir'] === undefined ? {} : { cacheDir: values['cache-dir'] }),
    json: values.json ?? false,
    verbose: values.verbose ?? false,
  };
  const timeouts = {
    ...(values.timeout === undefined ? {} : { timeout: parseMs('--timeout', values.timeout) }),
    ...(values['max-time'] === undefined ? {} : { maxTime: parseMs('--max-time', values['max-time']) }),
  };
  const servers = values.server ?? [];
  const commands: { [N in Command['name']]: () => Extract<Command, { name: N }> } = {
    tools: () => ({ name: 'tools', servers, long: values.long ?? false }),
    search: () => {
      const query = rest.join(' ').trim();
      if (query === '') throw new UsageError('"search" needs some words, such as: lazy-mcp search read a file');
      return { name: 'search', query, servers, ...(values.limit === undefined ? {} : { limit: parseCount('--limit', values.limit) }) };
    },
    tool: () => ({ name: 'tool', tool: rest[0] }),
    resources: () => ({ name: 'resources', servers }),
    status: () => {
      if (values.interval !== undefined && !values.watch) throw new UsageError('--interval applies to status --watch only');
      return values.watch ? { name: 'status', watch: { intervalMs: values.interval === undefined ? 1000 : parseMs('--interval', values.interval) } } : { name: 'status' };
    },
    read: () => ({ name: 'read', server: rest[0], uri: rest[1], ...timeouts }),
    login: () => {
      if (values.principal === '') throw new UsageError('--principal needs an id, such as: lazy-mcp login gh --principal alice');
      return { name: 'login', server: rest[0], ...(values.principal === undefined ? {} : { principal: values.principal }) };
    },
    prompts: () => ({ name: 'prompts', servers }),
    prompt: () => ({ name: 'prompt', prompt: rest[0], ...(rest[1] === undefined ? {} : { args: rest[1] }), ...timeouts }),
    call: () => {
      const given = rest.slice(1);
      if (given.length > 0 && values['args-file'] !== undefined) throw new UsageError('give the call arguments either on the command line or with --args-file, not both');
      const pairs = arePairs(given);
      if (!pairs && given.length > 1) throw new UsageError(`give the call arguments as one JSON object or as key=value pairs, got ${JSON.stringify(given[1])} after ${JSON.stringify(given[0])}`);
      return {
        name: 'call',
        tool: rest[0],
        ...(given.length === 0 ? {} : pairs ? { pairs: given } : { args: given[0] }),
        ...(values['args-file'] === undefined ? {} : { argsFile: values['args-file'] }),
        ...timeouts,
      };
    },
  };
  return { action: 'run', command: commands[name as Command['name']](), options };
}

/** Whether the call's arguments were written as `key=value` pairs rather than one JSON object. */
function arePairs(args: readonly string[]): boolean {
  return args.length > 0 && !args[0].trimStart().startsWith('{') && args.every((arg) => /^[^=]+=/.test(arg));
}

/** Node's parser errors in our words: an unknown option gets a suggestion. */
function parserMessage(error: Error & { code?: string }): string {
  const missing = /^Option '(-\S+)(?:, (--\S+))? <value>' argument missing/.exec(error.message);
  if (missing) return `${missing[2] ?? missing[1]} needs a value`;
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /Unknown option '([^']+)'/.exec(error.message)?.[1] : undefined;
  if (unknown === undefined) return oneLine(error.message);
  const names = Object.entries(OPTIONS).flatMap(([option, spec]) => [`--${option}`, ...('short' in spec ? [`-${spec.short}`] : [])]);
  return `unknown option ${unknown}${didYouMean(closest(unknown, names))}`;
}

function parseCount(option: string, text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text.trim()) || !(count > 0) || count > 1000) throw new UsageError(`${option} must be a whole number from 1 to 1000, got ${JSON.stringify(text)}`);
  return count;
}

function parseMs(option: string, text: string): number {
  const ms = Number(text);
  if (!/^\d+$/.test(text.trim()) || !(ms > 0)) throw new UsageError(`${option} must be a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
  return ms;
}

/** Parses the call's JSON arguments, which must be an object. */
export function parseToolArguments(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${source} must be a JSON object such as {"text":"hi"}, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}
