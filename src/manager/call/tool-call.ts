import { McpError, serverLabel } from '../../errors.js';
import { cutResult, isOverLimit } from '../../model/result-limits.js';
import type { McpClient } from '../../protocol/client.js';
import { INVALID_PARAMS } from '../../protocol/rpc-errors.js';
import type { RequestFinish } from '../../protocol/engine/pending-requests.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../protocol/engine/json-depth.js';
import type { CallOptions, CallToolResult, HostHandlers, Progress, Tool } from '../../protocol/types.js';
import type { Caller } from '../scope/host-handlers.js';
import { takeCallOptions } from './request-options.js';
import { saveResult } from './result-file.js';
import type { ServerSlot, SlotRequest } from '../pool/server-slot.js';
import { checkArguments, checkResult } from './tool-contract.js';
import { loadValidator, validatorLoaded } from '../../protocol/schemas/schema-validator.js';
import type { ToolIndex } from '../catalog/tool-index.js';

/** What a tool call needs from its manager. */
export interface ToolCallHost {
  readonly index: ToolIndex;
  /** What is known of the server's tools is stale: it disowned one. */
  invalidate(server: string): void;
  /** Where a result cut to `maxResultBytes` is kept whole. */
  stateDir(): string;
}

/**
 * One `tools/call` through the pool, as its slot runs it: the arguments checked against
 * the tool's `inputSchema` before anything is sent, the result against its `outputSchema`,
 * the depth limit and `maxResultBytes` when it comes back. One object per call holds what
 * its steps share, where closures would make several; it is also what the request is sent
 * with (its options, who makes it), so nothing else is made per call for that.
 */
// Not `implements RequestOptions`: that clause goes into the package's .d.ts, where these
// `T | undefined` fields fail a consumer's exactOptionalPropertyTypes check; where the call
// is sent as its own options, the compiler checks the shape all the same.
export class ToolCall implements SlotRequest<CallToolResult> {
  // RequestOptions, filled in when the request is sent.
  // Optional as in RequestOptions (its consumers may check with exactOptionalPropertyTypes), yet set at
  // construction so every call object has one shape.
  timeout?: number = undefined;
  maxTotalTimeout?: number = undefined;
  resetTimeoutOnProgress?: boolean = undefined;
  startedAt?: number = undefined;
  signal?: AbortSignal = undefined;
  onProgress?: (progress: Progress) => void = undefined;
  finish?: RequestFinish = undefined;
  readonly handlers: HostHandlers;
  /** The slot's finish goes to the client with the options: no promise layer per call. */
  readonly handsOn = true;
  /** The call as the host's handlers see it: the public name, as its caller made it. */
  readonly toolCall: { name: string; arguments: object };

  /** `definition`: the tool's, when known (its arguments must already have been checked against it). */
  constructor(
    private readonly host: ToolCallHost,
    private readonly slot: ServerSlot,
    private readonly tool: string,
    private readonly args: Record<string, unknown>,
    private readonly name: string,
    private definition: Tool | undefined,
    readonly caller: Caller,
    private readonly resultLimit: number | undefined,
  ) {
    this.handlers = caller.handlers;
    this.toolCall = { name, arguments: args };
  }

  send(client: McpClient, touch: () => void, options: CallOptions, waited: boolean, finish?: RequestFinish): Promise<CallToolResult> {
    const server = this.slot.name;
    if (waited || !this.definition) {
      // A start lists the server's tools: the definition may be new, or known only now.
      const now = this.host.index.definition(server, this.tool)?.tool;
      if (now && now !== this.definition && !validatorLoaded()) return loadValidator().then(() => this.send(client, touch, options, waited, finish));
      if (now && now !== this.definition) checkArguments(server, now, this.args, this.name);
      this.definition = now;
    }
    takeCallOptions(this, options, touch, this.slot.stopsWhenIdle);
    this.finish = finish;
    return client.callTool(this.tool, this.args, this);
  }

  /** `structuredContent` must fit the tool's `outputSchema`. */
  check(result: CallToolResult): void {
    const definition = this.definition;
    if (definition?.outputSchema !== undefined) checkResult(this.slot.name, definition, result);
  }

  /** The result as the caller gets it: within `maxResultBytes` (the whole of it saved to a file when cut). */
  done(result: CallToolResult): CallToolResult | Promise<CallToolResult> {
    const server = this.slot.name;
    // Whoever gets the result serializes it; one too deep for JSON.stringify is the server's fault.
    if (nestsDeeperThan(result, MAX_JSON_DEPTH)) {
      throw new McpError('protocol-error', `${serverLabel(server)}the result of tool ${JSON.stringify(this.name)} nests deeper than ${MAX_JSON_DEPTH} levels, which lazy-mcp refuses`, {
        server,
        phase: 'tools/call',
      });
    }
    const limit = this.resultLimit;
    if (limit === undefined || !isOverLimit(result, limit)) return result;
    return saveResult(this.host.stateDir(), server, this.tool, result).then((saved) => cutResult(result, limit, saved));
  }

  failed(error: unknown): Promise<never> {
    if (error instanceof McpError && disownsTool(error, this.tool)) return this.disowned(error);
    throw error;
  }

  /**
   * The server disowned a tool we listed. A listing on its way (a start ready on known
   * tools) shows what it has now; else what we know of its tools is stale.
   */
  private async disowned(error: McpError): Promise<never> {
    const server = this.slot.name;
    await this.slot.listed;
    if (this.host.index.definition(server, this.tool)) this.host.invalidate(server);
    throw new McpError('unknown-tool', `${serverLabel(server)}has no tool ${JSON.stringify(this.name)} (it answered: ${error.rpc?.message})`, {
      server,
      phase: 'tools/call',
      rpc: error.rpc,
      cause: error,
    });
  }
}

/**
 * Whether an error is the server saying it has no tool `tool`: MCP servers answer -32602
 * with "Unknown tool: x" or "Tool x not found". A tool's own failure that merely says
 * "not found" must not count, so the message has to name the tool.
 */
function disownsTool(error: McpError, tool: string): boolean {
  if (error.code !== 'rpc-error' || error.rpc?.code !== INVALID_PARAMS) return false;
  const name = tool.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`unknown tool:? ["'\`]?${name}\\b|tool ["'\`]?${name}["'\`]? not found|no such tool`, 'i').test(error.rpc.message);
}
