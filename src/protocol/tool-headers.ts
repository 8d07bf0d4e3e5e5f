import { type HeaderParam, scanHeaderParams } from '../transport/http/param-headers.js';
import type { Tool } from './types.js';

/** JSON-RPC code of `HeaderMismatch`: a 2026 HTTP server found the mirrored headers missing or unlike the body. */
export const HEADER_MISMATCH = -32020;

/** A listing as a 2026 Streamable HTTP client must take it (SEP-2243). */
export interface AdmittedTools {
  /** The tools whose `x-mcp-header` marks are valid (all those without marks among them). */
  tools: Tool[];
  /** Each admitted tool's marked parameters, for the transport's `Mcp-Param-*` headers. */
  headers: Map<string, HeaderParam[]>;
  /** The tools left out, each with what is wrong with its marks. */
  rejected: { name: string; reason: string }[];
}

/**
 * Checks every tool's `x-mcp-header` marks: a tool with an invalid mark is left out of the
 * listing (the spec's "MUST exclude"), so that one malformed definition neither breaks the
 * listing nor gets called with headers the server would refuse; the rest are kept as
 * listed, their schemas untouched.
 */
export function admitTools(tools: readonly Tool[]): AdmittedTools {
  const admitted: AdmittedTools = { tools: [], headers: new Map(), rejected: [] };
  for (const tool of tools) {
    const scan = scanHeaderParams(tool.inputSchema);
    if (!scan.ok) {
      admitted.rejected.push({ name: tool.name, reason: scan.reason });
      continue;
    }
    admitted.tools.push(tool);
    if (scan.params.length > 0) admitted.headers.set(tool.name, scan.params);
  }
  return admitted;
}
