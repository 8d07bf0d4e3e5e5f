import { McpError, type McpPhase, serverLabel, stderrHint, stoppedBy } from '../errors.js';
import type { ExitStatus } from '../transport/stdio/server-process.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './engine/json-depth.js';

/**
 * A request named by its method and target, `tools/call "echo"`, spelled out only when a
 * message needs it: building the text for every call would cost each a JSON.stringify.
 */
export class NamedRequest {
  constructor(
    readonly method: string,
    readonly target: string,
  ) {}

  toString(): string {
    return `${this.method} ${JSON.stringify(this.target)}`;
  }
}

/** How messages name a request: its method, or a {@link NamedRequest}. */
export type Label = string | NamedRequest;

/** What an error needs to know about the request it is about. */
export interface RequestLabel {
  /** `tools/call "echo"`. */
  label: Label;
  phase: McpPhase;
}

/**
 * The errors one client session produces, each naming the server, the request and
 * what happened, with the structured fields filled in.
 */
export class SessionErrors {
  private readonly prefix: string;

  constructor(private readonly server: string | undefined) {
    this.prefix = serverLabel(server);
  }

  peerExited(status: ExitStatus, tail: string[]): McpError {
    const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.exitCode}`;
    return new McpError('peer-exited', `${this.prefix}the server process ${how}${stderrHint(tail)}`, {
      server: this.server,
      exitCode: status.exitCode,
      signal: status.signal,
      stderrTail: tail,
    });
  }

  peerEof(tail: string[]): McpError {
    return new McpError('peer-eof', `${this.prefix}the server closed its stdout${stderrHint(tail)}`, { server: this.server, stderrTail: tail });
  }

  closed(): McpError {
    return new McpError('closed', `${this.prefix}the connection was closed`, { server: this.server });
  }

  /** A connection-level error (from the framing) restated for this server. */
  connection(error: McpError): McpError {
    return new McpError(error.code, `${this.prefix}${error.message}`, { server: this.server, cause: error.cause });
  }

  /** Why the session ended, restated for one request so it names that request's phase. */
  forRequest(reason: McpError, request: RequestLabel): McpError {
    // Reasons made by this session carry its prefix; one from below (a channel, a test peer) may not.
    const detail = reason.message.startsWith(this.prefix) ? reason.message.slice(this.prefix.length) : reason.message;
    return new McpError(reason.code, `${this.prefix}${request.label} failed: ${detail}`, {
      server: this.server,
      phase: request.phase,
      exitCode: reason.exitCode,
      signal: reason.signal,
      stderrTail: reason.stderrTail,
      cause: reason.code === 'closed' ? undefined : reason,
    });
  }

  /** A request whose params could not be encoded; it was never sent. */
  unsendable(request: RequestLabel, error: McpError): McpError {
    return new McpError('protocol-error', `${this.prefix}${request.label} was not sent: ${error.message}`, {
      server: this.server,
      phase: request.phase,
      cause: error.cause,
    });
  }

  timeout(request: RequestLabel, ms: number, qualifier = ''): McpError {
    return new McpError('timeout', `${this.prefix}${request.label} timed out after ${ms} ms${qualifier}; the request was cancelled`, {
      server: this.server,
      phase: request.phase,
    });
  }

  initializeTimeout(ms: number): McpError {
    return new McpError('timeout', `${this.prefix}initialize timed out after ${ms} ms; the server did not finish starting`, {
      server: this.server,
      phase: 'initialize',
    });
  }

  cancelled(request: RequestLabel, signal: AbortSignal): McpError {
    return stoppedBy(signal, `${this.prefix}${request.label}`, { server: this.server, phase: request.phase });
  }

  /** A JSON-RPC error answer; the server's code, message and data are kept in `rpc`. */
  rpc(request: RequestLabel, error: unknown): McpError {
    const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
    const rpc = {
      code: typeof e.code === 'number' ? e.code : 0,
      // Whatever else the server put there, shown only if it is safe to serialize.
      message: typeof e.message === 'string' ? e.message : nestsDeeperThan(error, MAX_JSON_DEPTH) ? '(an error nesting too deep to show)' : JSON.stringify(error),
      ...(e.data === undefined || nestsDeeperThan(e.data, MAX_JSON_DEPTH) ? {} : { data: e.data }),
    };
    return new McpError('rpc-error', `${this.prefix}${request.label} failed: ${rpc.message} (JSON-RPC error ${rpc.code})`, {
      server: this.server,
      phase: request.phase,
      rpc,
    });
  }

  invalidResult(request: RequestLabel, field: string, problem: string, cause: unknown): McpError {
    return new McpError('protocol-error', `${this.prefix}invalid ${request.phase} result: ${field}: ${problem}`, {
      server: this.server,
      phase: request.phase,
      cause,
    });
  }

  /** A result that failed its schema: names the first bad field. */
  fromIssues(request: RequestLabel, error: { issues: { path: PropertyKey[]; message: string }[] }): McpError {
    const issue = error.issues[0];
    return this.invalidResult(request, issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'result', issue?.message ?? 'invalid', error);
  }

  unsupportedVersion(answered: string, offered: string, supported: readonly string[]): McpError {
    return new McpError(
      'protocol-error',
      `${this.prefix}the server answered protocol version ${JSON.stringify(answered)} to our ${offered}; lazy-mcp speaks ${supported.join(', ')}`,
      { server: this.server, phase: 'initialize' },
    );
  }

  /** Attaches the stderr tail to a start-up error that does not carry one yet. */
  withStderr(error: McpError, tail: string[]): McpError {
    if (!(error instanceof McpError) || error.stderrTail || tail.length === 0) return error;
    return new McpError(error.code, `${error.message}${stderrHint(tail)}`, {
      server: error.server,
      phase: error.phase,
      rpc: error.rpc,
      stderrTail: tail,
      cause: error.cause,
    });
  }
}
