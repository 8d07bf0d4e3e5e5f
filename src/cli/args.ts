import { parseArgs } from 'node:util';
import { oneLine } from './format.js';

/** Exit statuses of `lazy-mcp`: 0 ok, 1 a tool or server error, 2 a usage or config error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake on the command line: reported in one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What to run, as parsed from the command line. */
export type Command =
  | { name: 'tools'; servers: string[] }
  | { name: 'call'; tool: string; args?: string; argsFile?: string; timeout?: number }
  | { name: 'resources'; servers: string[] }
  | { name: 'read'; server: string; uri: string; timeout?: number }
  | { name: 'status' }
  | { name: 'prompts'; servers: string[] }
  | { name: 'prompt'; prompt: string; args?: string; timeout?: number }
  | { name: 'tool'; tool: string };

/** Options every command takes. */
export interface GlobalOptions {
  /** `--config FILE`; undefined means the default lookup. */
  config?: string;
  /** `--cache-dir DIR`: turns the tool manifest cache on. */
  cacheDir?: string;
  json: boolean;
  verbose: boolean;
}

export type Invocation = { action: 'help' } | { action: 'version' } | { action: 'run'; command: Command; options: GlobalOptions };

export const USAGE = `lazy-mcp — many stdio MCP servers as one lazy, shared pool

Usage:
  lazy-mcp tools [--server S]... [--json]
  lazy-mcp call <public-name> [json-args | --args-file F] [--timeout MS] [--json]
  lazy-mcp resources [--server S]... [--json]
  lazy-mcp read <server> <uri> [--timeout MS] [--json]
  lazy-mcp status [--json]
  lazy-mcp prompts [--server S]... [--json]
  lazy-mcp prompt <public-name> [json-args] [--timeout MS] [--json]
  lazy-mcp tool <public-name> [--json]

Commands:
  tools       list every tool: public name, server, first line of its description
  call        call one tool by its public name (mcp__<server>__<tool>) and print its content
  resources   list the servers' resources and resource templates
  read        read one resource of one server
  status      start the servers as "tools" does, then show each one's state
  prompts     list every prompt: public name, server, arguments, description
  prompt      get one prompt by its public name, its arguments as a JSON object of strings
  tool        show one tool's description and input schema

Options:
  --config FILE     config file (default: ./.mcp.json if present, else the bundled example)
  --cache-dir DIR   keep tool lists in DIR so later runs list tools without starting servers
  --server S        only this server (repeatable)
  --args-file F     read the call's JSON arguments from file F ("-" for stdin)
  --timeout MS      time allowed for the request, in milliseconds (default: the server's, else 30000)
  --json            print the result as JSON; nothing else goes to stdout
  --verbose         stream server stderr and start progress to stderr; show stacks on errors
  -h, --help        show this help
  --version         print the version

Exit status: 0 ok, 1 a tool or server error, 2 a usage or config error.
`;

const OPTIONS = {
  config: { type: 'string' },
  'cache-dir': { type: 'string' },
  server: { type: 'string', multiple: true },
  'args-file': { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type OptionName = keyof typeof OPTIONS;

/** Per command: the options it takes beyond the global ones, and its positional arguments. */
const COMMANDS: Record<Command['name'], { options: OptionName[]; required: string[]; optional: string[] }> = {
  tools: { options: ['server'], required: [], optional: [] },
  call: { options: ['args-file', 'timeout'], required: ['public-name'], optional: ['json-args'] },
  resources: { options: ['server'], required: [], optional: [] },
  read: { options: ['timeout'], required: ['server', 'uri'], optional: [] },
  status: { options: [], required: [], optional: [] },
  prompts: { options: ['server'], required: [], optional: [] },
  prompt: { options: ['timeout'], required: ['public-name'], optional: ['json-args'] },
  tool: { options: [], required: ['public-name'], optional: [] },
};

const COMMAND_LIST = 'tools, call, resources, read, status, prompts, prompt and tool';

const GLOBAL: OptionName[] = ['config', 'cache-dir', 'json', 'verbose', 'help', 'version'];

/** Parses `argv` (without node and the script); throws {@link UsageError}. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs explains well ("Unknown option '--x'"), over several lines at times.
    throw new UsageError(oneLine((error as Error).message));
  }
  const { values, positionals } = parsed;
  if (values.help) return { action: 'help' };
  if (values.version) return { action: 'version' };

  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError(`no command given; the commands are ${COMMAND_LIST}`);
  if (!Object.hasOwn(COMMANDS, name)) throw new UsageError(`unknown command ${JSON.stringify(name)}; the commands are ${COMMAND_LIST}`);
  const spec = COMMANDS[name as Command['name']];

  for (const option of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(option) && !spec.options.includes(option)) throw new UsageError(`option --${option} does not apply to "${name}"`);
  }
  if (rest.length < spec.required.length) throw new UsageError(`"${name}" needs ${spec.required.map((p) => `<${p}>`).join(' ')}`);
  if (rest.length > spec.required.length + spec.optional.length) {
    throw new UsageError(`unexpected argument ${JSON.stringify(rest[spec.required.length + spec.optional.length])} for "${name}"`);
  }

  const options: GlobalOptions = {
    ...(values.config === undefined ? {} : { config: values.config }),
    ...(values['cache-dir'] === undefined ? {} : { cacheDir: values['cache-dir'] }),
    json: values.json ?? false,
    verbose: values.verbose ?? false,
  };
  const timeout = values.timeout === undefined ? {} : { timeout: parseTimeout(values.timeout) };
  const servers = values.server ?? [];
  const commands: { [N in Command['name']]: () => Extract<Command, { name: N }> } = {
    tools: () => ({ name: 'tools', servers }),
    resources: () => ({ name: 'resources', servers }),
    status: () => ({ name: 'status' }),
    prompts: () => ({ name: 'prompts', servers }),
    prompt: () => ({ name: 'prompt', prompt: rest[0], ...(rest[1] === undefined ? {} : { args: rest[1] }), ...timeout }),
    tool: () => ({ name: 'tool', tool: rest[0] }),
    read: () => ({ name: 'read', server: rest[0], uri: rest[1], ...timeout }),
    call: () => {
      if (rest[1] !== undefined && values['args-file'] !== undefined) throw new UsageError('give the call arguments either as json-args or with --args-file, not both');
      return {
        name: 'call',
        tool: rest[0],
        ...(rest[1] === undefined ? {} : { args: rest[1] }),
        ...(values['args-file'] === undefined ? {} : { argsFile: values['args-file'] }),
        ...timeout,
      };
    },
  };
  return { action: 'run', command: commands[name as Command['name']](), options };
}

function parseTimeout(text: string): number {
  const ms = Number(text);
  if (!/^\d+$/.test(text.trim()) || !(ms > 0)) throw new UsageError(`--timeout must be a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
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
