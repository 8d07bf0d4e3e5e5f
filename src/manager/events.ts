import type { McpError } from '../errors.js';
import type { ReloadReport } from './config/config-diff.js';
import type { ServerState } from './pool/server-slot.js';

/** Event payloads of {@link McpServerManager}. */
export interface ManagerEvents {
  stderr: { server: string; line: string };
  /** Server log messages, skipped stdout noise (`logger: "stdout"`), cache problems (`logger: "cache"`) and tools listed twice (`logger: "tools"`). */
  log: { server: string; level: string; logger?: string; data: unknown };
  toolsChanged: { server: string };
  promptsChanged: { server: string };
  resourcesChanged: { server: string };
  exit: { server: string; exitCode?: number; signal?: string; error?: McpError };
  stateChange: { server: string; from: ServerState; to: ServerState };
  /** A reload applied a new config: which servers were added, removed, changed and left as they were. */
  configChanged: ReloadReport;
  /** A watched config file changed but could not be read or did not parse; the last good config stays. */
  configError: { path: string; error: McpError };
  /**
   * A legacy-era server asked a question (`method`) while calls of several sessions were in
   * flight on it, so it could not be tied to one: the manager's handlers answered it, or it
   * was declined. `sessions`: the candidates' `ToolSession.id` (`"manager"` for the manager's own calls).
   * Give the server `"instances": "per-session"` to tie every question to its session.
   */
  unrouted: { server: string; method: string; sessions: string[] };
}
