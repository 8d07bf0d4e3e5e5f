import { McpError, serverLabel } from '../../errors.js';
import { compileSchema, issuesText } from '../../protocol/schemas/schema-validator.js';
import type { CallToolResult, Tool } from '../../protocol/types.js';

// A tool's schemas hold both sides to the contract: the arguments a model wrote before
// anything is sent, the server's structured result when it comes back. Schemas are
// compiled once (cached by identity, and by text across the process) and never fetch a remote `$ref`;
// one that cannot be compiled here is not enforced, rather than refuse what the server accepts.

/** Rejects arguments that do not fit the tool's `inputSchema` with a message a model can act on (the validator loaded first). */
export function checkArguments(server: string, tool: Tool, args: Record<string, unknown>, publicName?: string): void {
  const issues = compileSchema(tool.inputSchema)?.check(args) ?? [];
  if (issues.length === 0) return;
  throw new McpError(
    'invalid-arguments',
    `${serverLabel(server)}invalid arguments for tool ${JSON.stringify(publicName ?? tool.name)}: ${issuesText(issues)}`,
    { server, phase: 'tools/call' },
  );
}

/**
 * Rejects a successful result whose `structuredContent` does not fit the tool's `outputSchema`;
 * a tool's own failure is not checked. The call's arguments were checked against the same
 * definition before it was sent, so the validator is loaded.
 */
export function checkResult(server: string, tool: Tool, result: CallToolResult): void {
  if (result.isError === true || result.structuredContent === undefined || tool.outputSchema === undefined) return;
  const issues = compileSchema(tool.outputSchema)?.check(result.structuredContent) ?? [];
  if (issues.length === 0) return;
  const named = issues.map((issue) => ({ ...issue, path: issue.path === '' ? 'structuredContent' : `structuredContent.${issue.path}` }));
  throw new McpError(
    'protocol-error',
    `${serverLabel(server)}tool ${JSON.stringify(tool.name)} returned structuredContent that does not match its outputSchema: ${issuesText(named)}`,
    { server, phase: 'tools/call' },
  );
}
