import { readFileSync } from 'node:fs';
import { McpError } from '../errors.js';
import type { ContentBlock, McpServerManager, ServerStatus } from '../index.js';
import { type Command, parseToolArguments, UsageError } from './args.js';
import { describeContent, errorJson, firstLine, formatCallResult, formatReadResult, oneLine, table, toolErrorText } from './format.js';
import type { Reporter } from './reporter.js';

/** What a command works with; `print` is stdout, the only place results go. */
export interface CommandContext {
  manager: McpServerManager;
  reporter: Reporter;
  print: (text: string) => void;
  json: boolean;
  /** The terminal's width when stdout is one: tables are cut to fit rather than wrapped. */
  width?: number;
  /** Aborted on Ctrl-C: cancels the request in flight. */
  signal: AbortSignal;
}

/** Runs one command; resolves to the exit status (errors are thrown). */
export function runCommand(command: Command, ctx: CommandContext): Promise<number> {
  switch (command.name) {
    case 'tools':
      return listTools(command.servers, ctx);
    case 'call':
      return callTool(command, ctx);
    case 'resources':
      return listResources(command.servers, ctx);
    case 'read':
      return readResource(command, ctx);
    case 'status':
      return showStatus(ctx);
    case 'prompts':
      return listPrompts(command.servers, ctx);
    case 'prompt':
      return getPrompt(command, ctx);
    case 'tool':
      return showTool(command.tool, ctx);
  }
}

async function listTools(servers: string[], ctx: CommandContext): Promise<number> {
  const tools = await ctx.manager.listTools(servers.length > 0 ? { servers } : {});
  if (ctx.json) ctx.print(JSON.stringify(tools, null, 2));
  else if (tools.length > 0) ctx.print(table(['TOOL', 'SERVER', 'DESCRIPTION'], tools.map((t) => [t.name, t.server, firstLine(t.tool.description)]), ctx.width));
  return reportProblems(ctx, servers);
}

async function callTool(command: Extract<Command, { name: 'call' }>, ctx: CommandContext): Promise<number> {
  const args = toolArguments(command);
  const result = await ctx.manager.callTool(command.tool, args, {
    ...(command.timeout === undefined ? {} : { timeout: command.timeout }),
    signal: ctx.signal,
    onProgress: (progress) => ctx.reporter.progress(command.tool, progress),
  });
  const text = ctx.json ? JSON.stringify(result, null, 2) : result.isError ? '' : formatCallResult(result);
  if (text !== '') ctx.print(text);
  if (!result.isError) return 0;
  // The tool's own failure: what it said is the error message, as for any other error.
  ctx.reporter.line(`lazy-mcp: ${command.tool} failed: ${toolErrorText(result)}`);
  return 1;
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
      sections.push(table(['URI', 'SERVER', 'NAME', 'TYPE'], resources.map(({ server, resource: r }) => [r.uri, server, r.name, r.mimeType ?? '']), ctx.width));
    }
    if (templates.length > 0) {
      sections.push(table(['URI TEMPLATE', 'SERVER', 'NAME'], templates.map(({ server, resourceTemplate: t }) => [t.uriTemplate, server, t.name]), ctx.width));
    }
    if (sections.length > 0) ctx.print(sections.join('\n\n'));
  }
  return reportProblems(ctx, servers);
}

async function readResource(command: Extract<Command, { name: 'read' }>, ctx: CommandContext): Promise<number> {
  const result = await ctx.manager.readResource(command.server, command.uri, {
    ...(command.timeout === undefined ? {} : { timeout: command.timeout }),
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

/** One tool's description and input schema, found as `call` would find it (starting at most its server). */
async function showTool(name: string, ctx: CommandContext): Promise<number> {
  const tools = await ctx.manager.listTools();
  const found = tools.find((t) => t.name === name);
  if (!found) {
    const near = (await ctx.manager.searchTools(name, { limit: 3 })).map((t) => t.name);
    throw new McpError('unknown-tool', `no tool named ${JSON.stringify(name)}${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''}`, {});
  }
  if (ctx.json) ctx.print(JSON.stringify(found, null, 2));
  else {
    const { tool } = found;
    const head = `${found.name} (server ${JSON.stringify(found.server)}, tool ${JSON.stringify(tool.name)})${tool.title ? ` — ${tool.title}` : ''}`;
    ctx.print([head, '', tool.description ?? '(no description)', '', 'Input schema:', JSON.stringify(tool.inputSchema, null, 2)].join('\n'));
  }
  return 0;
}

/** Lists tools (starting servers, or answering from the cache) and reports where each server stands. */
async function showStatus(ctx: CommandContext): Promise<number> {
  await ctx.manager.listTools();
  const status = ctx.manager.status();
  if (ctx.json) {
    const out = Object.fromEntries(
      Object.entries(status).map(([server, { lastError, ...rest }]) => [server, { ...rest, ...(lastError ? { lastError: errorJson(lastError) } : {}) }]),
    );
    ctx.print(JSON.stringify(out, null, 2));
  } else {
    const rows = Object.entries(status).map(([server, s]) => [server, s.state, s.tools === undefined ? '-' : String(s.tools), s.lastError ? oneLine(s.lastError.message) : '']);
    ctx.print(table(['SERVER', 'STATE', 'TOOLS', 'ERROR'], rows));
  }
  return 0;
}

/** States in which a server that was asked for could not answer. */
const FAILED: ReadonlySet<ServerStatus['state']> = new Set(['invalid', 'backoff', 'failed', 'stopped']);

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
