import { readFileSync } from 'node:fs';
import { type ContentBlock, type ManagedTool, McpError, type McpServerManager, type ServerStatus } from '../index.js';
import { claimedServerPart, serverOfPublicName, serverPrefixes } from '../manager/catalog/tool-names.js';
import { type Command, parseToolArguments, UsageError } from './args.js';
import { type Colours, plain } from './colour.js';
import { DEFAULT_WIDTH, describeContent, firstLine, formatCallResult, formatReadResult, oneLine, statusJson, summaryLines, table, toolErrorText } from './format.js';
import type { Reporter } from './reporter.js';
import { closest, didYouMean } from './suggest.js';
import { pairsToArguments } from './tool-arguments.js';
import { watchStatus } from './status-watch.js';
import { login } from './login.js';

/** What a command works with; `print` is stdout, the only place results go. */
export interface CommandContext {
  manager: McpServerManager;
  reporter: Reporter;
  print: (text: string) => void;
  json: boolean;
  /** The terminal's width when stdout is one: tables wrap their last column to fit. */
  width?: number;
  /** Styles for stdout; plain unless stdout is a terminal that wants colour. */
  colour?: Colours;
  /** Aborted on Ctrl-C: cancels the request in flight. */
  signal: AbortSignal;
}

/** Runs one command; resolves to the exit status (errors are thrown). */
export function runCommand(command: Command, ctx: CommandContext): Promise<number> {
  switch (command.name) {
    case 'tools':
      return listTools(command.servers, command.long, ctx);
    case 'search':
      return searchTools(command, ctx);
    case 'tool':
      return showTool(command.tool, ctx);
    case 'call':
      return callTool(command, ctx);
    case 'resources':
      return listResources(command.servers, ctx);
    case 'read':
      return readResource(command, ctx);
    case 'status':
      return command.watch ? watchStatus(ctx, { intervalMs: command.watch.intervalMs, redraw: Boolean(process.stdout.isTTY) && !ctx.json }) : showStatus(ctx);
    case 'login':
      return login(command.server, command.principal, ctx);
    case 'prompts':
      return listPrompts(command.servers, ctx);
    case 'prompt':
      return getPrompt(command, ctx);
  }
}

/** One line per tool (name, first sentence) within the width; `long`: the table of name, server and whole first line. */
async function listTools(servers: string[], long: boolean, ctx: CommandContext): Promise<number> {
  const tools = await ctx.manager.listTools(servers.length > 0 ? { servers } : {});
  if (ctx.json) ctx.print(JSON.stringify(tools, null, 2));
  else if (tools.length > 0 && long) ctx.print(table(['TOOL', 'SERVER', 'DESCRIPTION'], tools.map((t) => [t.name, t.server, firstLine(t.tool.description)]), ctx.width, header(ctx)));
  else if (tools.length > 0) ctx.print(summaryLines(tools.map((t) => [t.name, t.tool.description ?? t.tool.title]), ctx.width ?? DEFAULT_WIDTH));
  return reportProblems(ctx, servers);
}

/**
 * The tools best matching some words, one line each. A search starts nothing, so with no
 * tool known yet (no cache, a first run) it lists the tools once, saying so, and searches again.
 */
async function searchTools(command: Extract<Command, { name: 'search' }>, ctx: CommandContext): Promise<number> {
  const options = { ...(command.servers.length > 0 ? { servers: command.servers } : {}), ...(command.limit === undefined ? {} : { limit: command.limit }) };
  let found = await ctx.manager.searchTools(command.query, options);
  if (found.unindexed.length > 0) {
    ctx.reporter.note(`listing the tools of ${found.unindexed.join(', ')} first (not known yet; --cache-dir DIR keeps them for later runs)`);
    await ctx.manager.listTools(command.servers.length > 0 ? { servers: command.servers } : {});
    found = await ctx.manager.searchTools(command.query, options);
  }
  if (ctx.json) ctx.print(JSON.stringify(found, null, 2));
  else if (found.length > 0) ctx.print(summaryLines(found.map((t) => [t.name, t.tool.description ?? t.tool.title]), ctx.width ?? DEFAULT_WIDTH));
  else if (!ctx.json) ctx.reporter.note(`no tool matches ${JSON.stringify(command.query)}; try other words, or lazy-mcp tools`);
  return reportProblems(ctx, command.servers);
}

async function callTool(command: Extract<Command, { name: 'call' }>, ctx: CommandContext): Promise<number> {
  // key=value pairs are typed by the tool's schema, so the tool is looked up first (starting only its server).
  const args = command.pairs === undefined ? toolArguments(command) : pairsToArguments(command.pairs, (await findTool(command.tool, ctx)).tool.inputSchema, command.tool);
  const result = await ctx.manager
    .callTool(command.tool, args, {
      ...(command.timeout === undefined ? {} : { timeout: command.timeout }),
      ...(command.maxTime === undefined ? {} : { maxTotalTimeout: command.maxTime }),
      signal: ctx.signal,
      onProgress: (progress) => ctx.reporter.progress(command.tool, progress),
    })
    .catch((error: unknown) => withSuggestions(error, command.tool, ctx));
  const text = ctx.json ? JSON.stringify(result, null, 2) : result.isError ? '' : formatCallResult(result);
  if (text !== '') ctx.print(text);
  if (!result.isError) return 0;
  // The tool's own failure: what it said is the error message, as for any other error.
  ctx.reporter.toolFailed(command.tool, toolErrorText(result));
  return 1;
}

/** One tool: its names, description, arguments and input schema. */
async function showTool(name: string, ctx: CommandContext): Promise<number> {
  const found = await findTool(name, ctx);
  if (ctx.json) {
    ctx.print(JSON.stringify(found, null, 2));
    return 0;
  }
  const { tool } = found;
  const lines = [`${(ctx.colour ?? plain).bold(found.name)}  (server ${found.server}, tool ${JSON.stringify(tool.name)})`];
  if (tool.title) lines.push(tool.title);
  if (tool.description) lines.push('', tool.description.trim());
  const schema = (tool.inputSchema ?? {}) as { properties?: Record<string, { type?: unknown; description?: string }>; required?: string[] };
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length > 0) {
    const rows = properties.map(([key, p]) => [key, typeof p?.type === 'string' ? p.type : Array.isArray(p?.type) ? p.type.join('|') : '', schema.required?.includes(key) ? 'yes' : '', firstLine(p?.description)]);
    lines.push('', table(['ARGUMENT', 'TYPE', 'REQUIRED', 'DESCRIPTION'], rows, ctx.width, header(ctx)));
  }
  lines.push('', 'Input schema:', JSON.stringify(tool.inputSchema, null, 2));
  ctx.print(lines.join('\n'));
  return 0;
}

/**
 * The tool with this public name, starting at most its server (all servers when the
 * name's server part names none). Not found: the server's own error if it cannot run,
 * else `unknown-tool` / `unknown-server` with close names.
 */
async function findTool(name: string, ctx: CommandContext): Promise<ManagedTool> {
  const server = serverOfPublicName(name, serverPrefixes(Object.keys(ctx.manager.status())));
  const tools = await ctx.manager.listTools(server === undefined ? {} : { servers: [server] });
  const found = tools.find((t) => t.name === name);
  if (found) return found;
  const status = server === undefined ? undefined : ctx.manager.status()[server];
  if (status?.state === 'disabled') throw new McpError('unavailable', `server ${JSON.stringify(server)}: the server is disabled in the config`, { server });
  if (status?.lastError && FAILED.has(status.state)) throw status.lastError;
  const hint = didYouMean(suggestNames(name, tools));
  if (server !== undefined) throw new McpError('unknown-tool', `server ${JSON.stringify(server)}: no tool named ${JSON.stringify(name)}${hint}`, { server });
  const part = claimedServerPart(name);
  if (part !== undefined) {
    const configured = Object.keys(ctx.manager.status()).join(', ');
    throw new McpError('unknown-server', `no server named ${JSON.stringify(part)} for tool ${JSON.stringify(name)}${configured ? ` (configured: ${configured})` : ''}${hint}`);
  }
  throw new McpError('unknown-tool', `no tool named ${JSON.stringify(name)} (public names are mcp__<server>__<tool>, see lazy-mcp tools)${hint}`);
}

/** An unknown name's error, with close public names: a raw tool name, or a typo in the server part, finds its tool too. */
async function withSuggestions(error: unknown, name: string, ctx: CommandContext): Promise<never> {
  if (!(error instanceof McpError) || (error.code !== 'unknown-tool' && error.code !== 'unknown-server')) throw error;
  const tools = await ctx.manager.listTools(error.code === 'unknown-tool' && error.server !== undefined ? { servers: [error.server] } : {});
  const names = suggestNames(name, tools);
  if (names.length === 0) throw error;
  const { server, phase } = error;
  throw new McpError(error.code, `${error.message.replace(/; did you mean [^?]*\?/, '')}${didYouMean(names)}`, { server, phase });
}

/** Public names a mistyped one may have meant: same raw tool name, same tool under a close server part, or a close spelling. */
function suggestNames(name: string, tools: readonly ManagedTool[]): string[] {
  const toolPart = /^mcp__.+?__(.+)$/.exec(name)?.[1];
  const exact = tools.filter((t) => t.tool.name === name || (toolPart !== undefined && (t.tool.name === toolPart || t.name.endsWith(`__${toolPart}`)))).map((t) => t.name);
  return [...new Set([...exact, ...closest(name, tools.map((t) => t.name))])].slice(0, 3);
}

function header(ctx: CommandContext): (text: string) => string {
  return (ctx.colour ?? plain).bold;
}

function toolArguments(command: Extract<Command, { name: 'call' }>): Record<string, unknown> {
  if (command.argsFile === undefined) return command.args === undefined ? {} : parseToolArguments(command.args, 'json-args');
  let text: string;
  try {
    // "-" is stdin (descriptor 0), so arguments can be piped in.
    text = readFileSync(command.argsFile === '-' ? 0 : command.argsFile, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --args-file ${command.argsFile}: ${(error as Error).message}`);
  }
  return parseToolArguments(text, `--args-file ${command.argsFile}`);
}

async function listResources(servers: string[], ctx: CommandContext): Promise<number> {
  const { manager } = ctx;
  // A named server is listed strictly (its failure is the command's error); all servers leniently.
  const scopes = servers.length > 0 ? servers : [undefined];
  const lists = await Promise.all(scopes.map((server) => Promise.all([manager.listResources(server), manager.listResourceTemplates(server)])));
  const resources = lists.flatMap(([r]) => r);
  const templates = lists.flatMap(([, t]) => t);
  if (ctx.json) {
    ctx.print(JSON.stringify({ resources, resourceTemplates: templates }, null, 2));
  } else {
    const sections: string[] = [];
    if (resources.length > 0) {
      sections.push(table(['URI', 'SERVER', 'NAME', 'TYPE'], resources.map(({ server, resource: r }) => [r.uri, server, r.name, r.mimeType ?? '']), ctx.width, header(ctx)));
    }
    if (templates.length > 0) {
      sections.push(table(['URI TEMPLATE', 'SERVER', 'NAME'], templates.map(({ server, resourceTemplate: t }) => [t.uriTemplate, server, t.name]), ctx.width, header(ctx)));
    }
    if (sections.length > 0) ctx.print(sections.join('\n\n'));
  }
  return reportProblems(ctx, servers);
}

async function readResource(command: Extract<Command, { name: 'read' }>, ctx: CommandContext): Promise<number> {
  const result = await ctx.manager.readResource(command.server, command.uri, {
    ...(command.timeout === undefined ? {} : { timeout: command.timeout }),
    ...(command.maxTime === undefined ? {} : { maxTotalTimeout: command.maxTime }),
    signal: ctx.signal,
  });
  ctx.print(ctx.json ? JSON.stringify(result, null, 2) : formatReadResult(result));
  return 0;
}

async function listPrompts(servers: string[], ctx: CommandContext): Promise<number> {
  const prompts = await ctx.manager.listPrompts(servers.length > 0 ? { servers } : {});
  if (ctx.json) ctx.print(JSON.stringify(prompts, null, 2));
  else if (prompts.length > 0) {
    const argumentsOf = (p: (typeof prompts)[number]) => (p.prompt.arguments ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
    ctx.print(table(['PROMPT', 'SERVER', 'ARGUMENTS', 'DESCRIPTION'], prompts.map((p) => [p.name, p.server, argumentsOf(p), firstLine(p.prompt.description)]), ctx.width));
  }
  return reportProblems(ctx, servers);
}

async function getPrompt(command: Extract<Command, { name: 'prompt' }>, ctx: CommandContext): Promise<number> {
  const args = command.args === undefined ? {} : parseToolArguments(command.args, 'json-args');
  const wrong = Object.entries(args).find(([, v]) => typeof v !== 'string');
  if (wrong) throw new UsageError(`prompt arguments are strings; json-args ${JSON.stringify(wrong[0])} is ${JSON.stringify(wrong[1])}`);
  const result = await ctx.manager.getPrompt(command.prompt, args as Record<string, string>, {
    ...(command.timeout === undefined ? {} : { timeout: command.timeout }),
    signal: ctx.signal,
  });
  if (ctx.json) ctx.print(JSON.stringify(result, null, 2));
  else ctx.print(result.messages.map((m) => `${m.role}:\n${describeContent(m.content as ContentBlock)}`).join('\n\n'));
  return 0;
}

/** Lists tools (starting servers, or answering from the cache) and reports where each server stands. */
async function showStatus(ctx: CommandContext): Promise<number> {
  await ctx.manager.listTools();
  const status = ctx.manager.status();
  if (ctx.json) {
    ctx.print(JSON.stringify(statusJson(status), null, 2));
  } else {
    const rows = Object.entries(status).map(([server, s]) => [server, s.sandbox ? `${s.state} (sandboxed)` : s.state, s.tools === undefined ? '-' : String(s.tools), s.lastError ? oneLine(s.lastError.message) : '']);
    ctx.print(table(['SERVER', 'STATE', 'TOOLS', 'ERROR'], rows, ctx.width, header(ctx)));
  }
  // A server that cannot run (its start failed, or its entry is invalid) makes the status a failure.
  return Object.values(status).some((s) => s.state === 'failed' || s.state === 'backoff' || s.state === 'invalid') ? 1 : 0;
}

/** States in which a server that was asked for could not answer. */
const FAILED: ReadonlySet<ServerStatus['state']> = new Set(['invalid', 'backoff', 'failed', 'stopped', 'unsupported']);

/**
 * After a lenient listing, says on stderr which servers were left out and why: a server
 * that failed or is misconfigured makes the exit status 1; an unsupported transport is
 * only a warning, and a disabled server is silent (both are what the config asked for).
 */
function reportProblems(ctx: CommandContext, servers: string[]): number {
  let code = 0;
  for (const [server, { state, lastError }] of Object.entries(ctx.manager.status())) {
    if (!lastError || (servers.length > 0 && !servers.includes(server))) continue;
    if (state === 'unsupported') ctx.reporter.warn(lastError.message);
    else if (FAILED.has(state)) {
      ctx.reporter.error(lastError);
      code = 1;
    }
  }
  return code;
}
