/** Stable machine-readable reason of an {@link McpError}. */
export type McpErrorCode =
  | 'invalid-config'
  | 'unsupported-transport'
  | 'unknown-server'
  | 'unknown-tool'
  | 'unknown-prompt'
  | 'invalid-arguments'
  | 'spawn-failed'
  | 'connect-failed'
  | 'auth-required'
  | 'timeout'
  | 'cancelled'
  | 'peer-exited'
  | 'peer-eof'
  | 'protocol-error'
  | 'rpc-error'
  | 'unavailable'
  | 'closed'
  | 'rate-limited'
  | 'sandbox-unavailable';

/** Where in a server's life an error happened. */
export type McpPhase =
  | 'config'
  | 'spawn'
  | 'connect'
  | 'auth'
  | 'discover'
  | 'initialize'
  | 'tools/list'
  | 'tools/call'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete'
  | 'resources/subscribe'
  | 'subscriptions/listen'
  | 'logging/setLevel'
  | 'ping'
  | 'shutdown';

/** A JSON-RPC error object as the server sent it. */
export interface RpcErrorData {
  code: number;
  message: string;
  data?: unknown;
}

export interface McpErrorFields {
  server?: string;
  phase?: McpPhase;
  exitCode?: number;
  signal?: string;
  stderrTail?: string[];
  rpc?: RpcErrorData;
  /** HTTP status of the answer that failed, for HTTP transports. */
  status?: number;
  /** `rate-limited`: when the call may be tried again, in ms from now. */
  retryAfterMs?: number;
  /** `auth-required` for a principal of an OAuth server: the URL to send that principal's user to. */
  authorizationUrl?: string;
  cause?: unknown;
}

/**
 * The one error type of lazy-mcp. `code` is stable and meant for programs;
 * `message` names the server, the phase and what to do, and is meant for people.
 */
export class McpError extends Error {
  override readonly name = 'McpError';
  readonly code: McpErrorCode;
  declare readonly server?: string;
  declare readonly phase?: McpPhase;
  declare readonly exitCode?: number;
  declare readonly signal?: string;
  declare readonly stderrTail?: string[];
  declare readonly rpc?: RpcErrorData;
  declare readonly status?: number;
  declare readonly retryAfterMs?: number;
  declare readonly authorizationUrl?: string;

  constructor(code: McpErrorCode, message: string, fields: McpErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    // Only set what is known, so a logged error shows no undefined noise.
    if (fields.server !== undefined) this.server = fields.server;
    if (fields.phase !== undefined) this.phase = fields.phase;
    if (fields.exitCode !== undefined) this.exitCode = fields.exitCode;
    if (fields.signal !== undefined) this.signal = fields.signal;
    if (fields.stderrTail !== undefined) this.stderrTail = fields.stderrTail;
    if (fields.rpc !== undefined) this.rpc = fields.rpc;
    if (fields.status !== undefined) this.status = fields.status;
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
    if (fields.authorizationUrl !== undefined) this.authorizationUrl = fields.authorizationUrl;
  }
}

/**
 * The error of something `signal` stopped, described by `what` (`server "fs": tools/call
 * "x"`): `cancelled`, or `closed` when the signal says its owner was closed (a session
 * aborts its calls with a `closed` error when it closes).
 */
export function stoppedBy(signal: AbortSignal, what: string, fields: McpErrorFields = {}): McpError {
  const reason: unknown = signal.reason;
  if (isMcpError(reason) && reason.code === 'closed') return new McpError('closed', `${what} was cancelled: ${reason.message}`, { ...fields, cause: reason });
  return new McpError('cancelled', `${what} was cancelled`, { ...fields, cause: reason });
}

/** `server "fs": ` — the prefix every message about one server starts with. */
export function serverLabel(server: string | undefined): string {
  return server === undefined ? '' : `server ${JSON.stringify(server)}: `;
}

/** Longest stderr hint, in characters, whatever the tail holds. */
const MAX_STDERR_HINT = 500;

/**
 * ` (last stderr: …)` built from a stderr tail, or '' when there is none: the lines that
 * explain a failure (`Error: …`, `panic: …`, a traceback's last line) and the last
 * `lines` lines that say anything, joined by ` | `, a gap shown as `…`, at most 500
 * characters.
 */
export function stderrHint(tail: readonly string[] | undefined, lines = 3): string {
  if (!tail || tail.length === 0) return '';
  const quoted = explainingLines(tail, lines)
    .map((line) => line ?? '…')
    .join(' | ');
  return ` (last stderr: ${quoted.length > MAX_STDERR_HINT ? `${quoted.slice(0, MAX_STDERR_HINT)}…` : quoted})`;
}

/**
 * Whether `value` is an {@link McpError}, also one made by another copy of this package
 * (where `instanceof` fails): it has the name and a string code.
 */
export function isMcpError(value: unknown): value is McpError {
  if (value instanceof McpError) return true;
  return value instanceof Error && value.name === 'McpError' && typeof (value as { code?: unknown }).code === 'string';
}

/**
 * Lines that say what went wrong, as crash reports put them: a JavaScript or Python
 * exception line (`Error: …`, `TypeError: …`, `Error [ERR_X]: …`, `ValueError: …`,
 * `java.lang.IllegalStateException: …`), a Go `panic:` or `fatal error:`, a Rust
 * `panicked at`, an `error:` of a CLI, npm's `npm error …`. A Python exception group's
 * `| ` / `+ ` margin is ignored. Warnings are not explanations.
 */
const EXPLAINING = [
  /^(?:[\w$]+\.)*(?:[A-Z][\w$]*)?(?:Error|Exception|ExceptionGroup|Exit|Interrupt|Fault|Panic)(?: \[[\w-]+\])?(?::\s|$)/,
  /^(?:panic|fatal error|error|fatal|FATAL|ERROR|Fatal error|Uncaught)(?:\[\w+\])?:\s/,
  /^Exception in thread /,
  /^thread '.*' panicked at /,
  /^npm (?:ERR!|error) (?:code|\d{3}|[A-Z]\w+)\b/,
  /^Segmentation fault|^Aborted|^Killed$/,
];
/** Lines that explain nothing: a stack frame, a lone brace of an error's properties, Node's version footer. */
const NOISE = [/^[\s|+]*at /, /^[\s|+]*File "/, /^[\s{}[\]()^,;|+-]*$/, /^Node\.js v\d/, /^goroutine \d+ \[/, /^exit status \d+$/];

/** The longest a quoted line may be, in characters. */
const MAX_QUOTED_LINE = 200;

/**
 * What of a stderr tail to quote in an error message, oldest first: the lines that
 * explain the failure (the first and the last such line) and the last `lastLines`
 * lines that say anything, without repeats. `undefined` marks a gap between the two.
 */
export function explainingLines(tail: readonly string[], lastLines = 3): (string | undefined)[] {
  const explaining: number[] = [];
  const unmargined = tail.map((line) => line.replace(/^[\s|+]*(?=\S)/, ''));
  for (let i = 0; i < tail.length; i++) {
    const line = unmargined[i]!;
    if (EXPLAINING.some((pattern) => pattern.test(line)) && !/^\w*Warning\b/.test(line)) explaining.push(i);
  }
  const chosen = new Set<number>();
  if (explaining.length > 0) {
    chosen.add(explaining[0]!);
    chosen.add(explaining[explaining.length - 1]!);
    // Rust prints the message on the line after `panicked at …:`.
    for (const i of [...chosen]) if (/panicked at .*:$/.test(tail[i]!) && i + 1 < tail.length) chosen.add(i + 1);
  }
  let wanted = lastLines;
  for (let i = tail.length - 1; i >= 0 && wanted > 0; i--) {
    if (NOISE.some((pattern) => pattern.test(tail[i]!))) continue;
    chosen.add(i);
    wanted -= 1;
  }
  // A tail of nothing but noise still says something.
  if (chosen.size === 0) for (let i = Math.max(0, tail.length - lastLines); i < tail.length; i++) chosen.add(i);
  const picked = [...chosen].sort((a, b) => a - b);
  const out: (string | undefined)[] = [];
  picked.forEach((index, k) => {
    if (k > 0 && index !== picked[k - 1]! + 1) out.push(undefined);
    const line = unmargined[index]!.trim();
    out.push(line.length > MAX_QUOTED_LINE ? `${line.slice(0, MAX_QUOTED_LINE)}…` : line);
  });
  return out;
}
